#include "gate/report.hpp"
#include "types/number_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trilemma::gate {
namespace {

using nlohmann::json;

// Figures rounded for reports, so a baseline file does not carry float noise.
double rounded(double v) { return std::round(v * 1e4) / 1e4; }

json opt(const std::optional<double>& v) { return v ? json(rounded(*v)) : json(nullptr); }


std::string title(const Outcome& o) { return o.model + " / " + o.budget; }

std::string failure_text(const Outcome& o) {
  std::string s = o.message;
  for (const auto& r : o.regressions) s += "\nregression: " + r.message;
  return s;
}

// CI viewers (Jenkins, GitLab, GitHub's test reporters) split a classname at its dots into
// packages: `trilemma.gate.qwen2.5-0.5b` would show as class `5b` of package `...qwen2.5-0`. The
// model's dots become underscores in the classname (the JSON and text reports keep the id).
std::string junit_class(const std::string& model) {
  std::string c = model;
  std::replace(c.begin(), c.end(), '.', '_');
  return "trilemma.gate." + c;
}

}  // namespace

json report_to_json(const Report& report) {
  json j;
  j["schema"] = "trilemma.gate";
  j["schema_version"] = k_report_schema_version;
  j["budgets_file"] = report.budgets_file;
  j["models"] = report.models;
  j["baseline"] = report.baseline;
  j["margin_pct"] = report.margin_pct;
  j["passed"] = report.pass();
  j["summary"] = {{"total", report.outcomes.size()},
                  {"passed", report.outcomes.size() - report.failed()},
                  {"failed", report.failed()},
                  {"regressions", report.regressions()}};
  j["results"] = json::array();
  for (const auto& o : report.outcomes) {
    json r = {{"model", o.model},       {"budget", o.budget},   {"device", o.device},
              {"scenario", o.scenario}, {"context", o.context}, {"status", o.pass ? "pass" : "fail"},
              {"message", o.message}};
    r["plan"] = o.has_plan ? json(o.plan_summary) : json(nullptr);
    r["config"] = o.has_plan ? o.config : json(nullptr);
    if (o.has_plan) {
      r["figures"] = json::object();
      // A figure the run could not compute (energy without a power figure is infinite J/token):
      // null, as baselines read it, never a number no run has.
      for (const auto& fi : figures())
        r["figures"][std::string(fi.name)] = std::isfinite(o.figures[fi.figure]) ? json(rounded(o.figures[fi.figure])) : json(nullptr);
    } else {
      r["figures"] = nullptr;
    }
    r["checks"] = json::array();
    for (const auto& c : o.checks)
      r["checks"].push_back({{"figure", info(c.figure).name},
                             {"limit_key", info(c.figure).limit},
                             {"limit", rounded(c.limit)},
                             {"value", rounded(c.value)},
                             {"margin_pct", rounded(c.margin_pct)},
                             {"pass", c.pass}});
    if (o.limiting)
      r["limiting"] = {{"figure", o.limiting->figure},
                       {"limit", opt(o.limiting->limit)},
                       {"value", opt(o.limiting->value)},
                       {"margin_pct", opt(o.limiting->margin_pct)},
                       {"message", o.limiting->message}};
    else
      r["limiting"] = nullptr;
    r["regressions"] = json::array();
    for (const auto& g : o.regressions)
      r["regressions"].push_back({{"figure", g.figure},
                                  {"baseline", rounded(g.baseline)},
                                  {"value", rounded(g.value)},
                                  {"change_pct", rounded(g.change_pct)},
                                  {"message", g.message}});
    j["results"].push_back(r);
  }
  return j;
}

std::string report_to_text(const Report& report) {
  std::string s = "gate: " + std::to_string(report.models.size()) + " model(s) x " +
                  std::to_string(report.outcomes.size() / std::max<std::size_t>(1, report.models.size())) +
                  " budget(s) from " + report.budgets_file + ": " +
                  std::to_string(report.outcomes.size() - report.failed()) + " pass, " + std::to_string(report.failed()) +
                  " fail";
  if (!report.baseline.empty())
    s += ", " + std::to_string(report.regressions()) + " regression(s) against " + report.baseline + " (margin " +
         fixed(report.margin_pct, 1) + "%)";
  s += "\n";
  for (const auto& o : report.outcomes) {
    s += std::string(o.pass ? "  PASS  " : "  FAIL  ") + o.model + " / " + o.budget + " (" + o.device + ", " + o.scenario +
         ", ctx " + std::to_string(o.context) + ")\n";
    if (o.has_plan) s += std::string(o.pass ? "        plan " : "        nearest plan ") + o.plan_summary + "\n";
    if (o.limiting) s += "        limiting " + o.limiting->message + "\n";
    if (!o.pass && o.message != (o.limiting ? o.limiting->message : "")) s += "        " + o.message + "\n";
    for (const auto& r : o.regressions) s += "        REGRESSION " + r.message + "\n";
  }
  s += report.pass() ? "result: pass\n" : "result: FAIL\n";
  return s;
}

std::string report_to_junit(const Report& report) {
  std::size_t failures = 0;
  for (const auto& o : report.outcomes) failures += (!o.pass || !o.regressions.empty()) ? 1 : 0;
  const std::string counts = " tests=\"" + std::to_string(report.outcomes.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"0\"";
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<testsuites name=\"trilemma gate\"" + counts + ">\n";
  s += "  <testsuite name=\"" + xml_escape("trilemma gate: " + report.budgets_file) + "\"" + counts + " skipped=\"0\">\n";
  for (const auto& o : report.outcomes) {
    s += "    <testcase classname=\"" + xml_escape(junit_class(o.model)) + "\" name=\"" + xml_escape(o.budget) +
         "\" time=\"0\">\n";
    if (!o.pass || !o.regressions.empty()) {
      const std::string type = o.pass ? "regression" : "budget";
      const std::string head = o.limiting ? o.limiting->message : o.message;
      s += "      <failure type=\"" + type + "\" message=\"" + xml_escape(o.pass ? o.regressions.front().message : head) +
           "\">" + xml_escape(failure_text(o)) + "</failure>\n";
    } else {
      s += "      <system-out>" + xml_escape(o.message) + "</system-out>\n";
    }
    s += "    </testcase>\n";
  }
  s += "  </testsuite>\n</testsuites>\n";
  return s;
}

std::string github_escape_data(const std::string& in) {
  std::string s;
  for (char c : in) {
    if (c == '%') s += "%25";
    else if (c == '\r') s += "%0D";
    else if (c == '\n') s += "%0A";
    else s += c;
  }
  return s;
}

std::string github_escape_property(const std::string& in) {
  std::string s;
  for (char c : github_escape_data(in)) {
    if (c == ':') s += "%3A";
    else if (c == ',') s += "%2C";
    else s += c;
  }
  return s;
}

std::string report_to_github(const Report& report) {
  std::string s;
  for (const auto& o : report.outcomes) {
    std::string props = "file=" + github_escape_property(report.budgets_file);
    if (o.line > 0) props += ",line=" + std::to_string(o.line);
    if (!o.pass) {
      // The limiting figure first: the annotation is what a reviewer reads.
      std::string message = o.message;
      if (o.limiting && o.message.find(o.limiting->message) == std::string::npos)
        message = "limiting " + o.limiting->message + "; " + o.message;
      s += "::error " + props + ",title=" + github_escape_property("trilemma gate: " + title(o) + " fails") +
           "::" + github_escape_data(message) + "\n";
    }
    for (const auto& r : o.regressions)
      s += "::error " + props + ",title=" + github_escape_property("trilemma gate: " + title(o) + " regresses") +
           "::" + github_escape_data(r.message) + "\n";
    if (o.pass && o.regressions.empty())
      s += "::notice " + props + ",title=" + github_escape_property("trilemma gate: " + title(o) + " passes") +
           "::" + github_escape_data(o.message) + "\n";
  }
  return s;
}

}  // namespace trilemma::gate
