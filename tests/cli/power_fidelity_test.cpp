// docs/power.md's table of predictions beside published measurements: each row of
// data/power/energy-measurements.csv planned with the measured configuration pinned, and the
// energy per token compared. The table in the docs must be what today's model predicts
// (TRILEMMA_UPDATE_GOLDEN=1 rewrites it); the error it states is the measured error.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "io/csv.hpp"
#include "run_binary.hpp"

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string num(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Three significant digits, in fixed notation (J/token spans 0.04 to 20).
std::string sig(double v) { return num(v, v >= 10 ? 1 : v >= 1 ? 2 : 3); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A profile that constrains nothing: the row's pins choose the configuration.
const char* k_profile = R"(id: measured
name: Measured configuration
use_cases: "docs/power.md comparisons"
keeps: accuracy
constraints: {}
objective: [{metric: decode_tok_s, direction: max}]
defaults: {context: 512, prompt: 64}
)";

}  // namespace

TEST_CASE("docs/power.md: predicted energy per token beside every published measurement, current", "[cli][power]") {
  const fs::path root = TRILEMMA_SOURCE_DIR;
  const auto csv = trilemma::io::parse_csv(read(root / "data/power/energy-measurements.csv"), "data/power/energy-measurements.csv");
  REQUIRE(csv.ok());
  const fs::path profile = fs::temp_directory_path() / ("trilemma-power-profile-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(profile) << k_profile;
  auto col = [&](const trilemma::io::CsvRecord& r, const char* name) { return r.fields[*csv->column(name)]; };

  std::string table =
      "| device | model, weights, backend | published tok/s, W, J/token | predicted tok/s, W | predicted J/token (range) | error | in range | watts measured |\n"
      "|---|---|---|---|---|---|---|---|\n";
  std::vector<double> all_errors, independent_errors;
  int in_range = 0;
  for (const auto& r : csv->records) {
    std::string args = "plan -m " + col(r, "model") + " -d " + col(r, "device") + " -s " + profile.string() + " --weights " +
                       col(r, "weights") + " --backend " + col(r, "backend") + " --context " + col(r, "context") +
                       " --prompt 64 --kv f16 --kv-strategy contiguous --no-speculative --json";
    if (!col(r, "threads").empty()) args += " --threads " + col(r, "threads");
    if (!col(r, "sustained_min").empty()) args += " --sustained " + col(r, "sustained_min");
    const auto run = trilemma::testing::run_trilemma(args);
    INFO(args);
    REQUIRE(run.code == 0);
    const auto doc = nlohmann::json::parse(run.out);
    const auto& e = doc["chosen"]["energy"];
    REQUIRE(e["known"] == true);
    const double tok_s = std::stod(col(r, "tok_s")), watts = std::stod(col(r, "watts"));
    const double published = watts / tok_s;
    const double mid = e["joules_per_token"]["mid"], low = e["joules_per_token"]["low"], high = e["joules_per_token"]["high"];
    const double error = (mid - published) / published;
    const bool covered = low <= published && published <= high;
    in_range += covered;
    all_errors.push_back(std::abs(error));
    if (col(r, "same_source") == "no") independent_errors.push_back(std::abs(error));
    table += "| " + col(r, "device") + " | " + col(r, "model") + " " + col(r, "weights") + " " + col(r, "backend") +
             (col(r, "sustained_min").empty() ? "" : ", " + col(r, "sustained_min") + " min") + " | " + sig(tok_s) + ", " +
             sig(watts) + ", " + sig(published) + " | " + sig(doc["chosen"]["latency"]["decode_tok_s"]["mid"].get<double>()) +
             ", " + sig(e["decode_w"]["mid"].get<double>()) + " | " + sig(mid) + " (" + sig(low) + "-" + sig(high) + ") | " +
             (error >= 0 ? "+" : "") + num(100 * error, 0) + "% | " + (covered ? "yes" : "no") + " | " + col(r, "scope") +
             (col(r, "same_source") == "yes" ? "; power figure from this source" : "") + " |\n";
  }
  fs::remove(profile);
  table += "\nMedian |error| of J/token: " + num(100 * median(all_errors), 0) + "% over " + std::to_string(all_errors.size()) +
           " measurements; " + num(100 * median(independent_errors), 0) + "% over the " +
           std::to_string(independent_errors.size()) + " whose device power figure comes from elsewhere. The published figure falls in the predicted range in " +
           std::to_string(in_range) + " of " + std::to_string(all_errors.size()) + ".\n";

  const fs::path doc = root / "docs/power.md";
  std::string text = read(doc);
  const std::string begin = "<!-- energy-table begin -->\n", end = "<!-- energy-table end -->";
  const auto b = text.find(begin), e = text.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  const std::string current = text.substr(b + begin.size(), e - b - begin.size());
  if (std::getenv("TRILEMMA_UPDATE_GOLDEN")) {
    text.replace(b + begin.size(), e - b - begin.size(), table);
    std::ofstream(doc) << text;
    return;
  }
  CHECK(current == table);
}
