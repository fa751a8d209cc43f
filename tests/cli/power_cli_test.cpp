// Black-box tests of energy, sustained planning and `requirements` (issue 20): the inverse
// command agrees with `plan` on every device of the database.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <set>

#include "run_binary.hpp"

namespace {

using trilemma::testing::Run;
Run run_power(const std::string& args, bool with_stderr = false) { return trilemma::testing::run_trilemma(args, with_stderr); }

nlohmann::json json_of(const Run& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

}  // namespace

TEST_CASE("cli requirements: Llama-3.1-8B at 20 tok/s lists the devices plan finds a feasible plan on, and only those", "[cli][power]") {
  const auto req = run_power("requirements -m llama-3.1-8b --min-tok-s 20 --json");
  REQUIRE(req.code == 0);
  const auto doc = json_of(req);
  CHECK(doc["schema"] == "trilemma.requirements");
  CHECK(doc["limits"]["min_decode_tok_s"] == 20.0);
  std::set<std::string> listed;
  for (const auto& d : doc["devices"])
    if (d["status"] == "qualifies") listed.insert(d["id"].get<std::string>());
  CHECK_FALSE(listed.empty());
  const auto all = json_of(run_power("devices list --json"));
  REQUIRE(doc["devices"].size() == all.size());
  for (const auto& d : all) {
    const std::string id = d["id"];
    const auto plan = run_power("plan -m llama-3.1-8b -d " + id + " --min-tok-s 20 --json");
    INFO(id);
    if (listed.count(id)) {
      CHECK(plan.code == 0);
      CHECK(json_of(plan)["status"] == "ok");
    } else {
      CHECK(plan.code == 4);
    }
  }
  // Hand-picked: a 1 TB/s card qualifies; a Raspberry Pi 5 (17 GB/s) cannot stream 8B weights 20 times a second.
  CHECK(listed.count("rtx-4090"));
  CHECK_FALSE(listed.count("raspberry-pi-5"));
  // Per weight format: the bandwidth a device must reach is 20 x the bytes one token reads.
  for (const auto& n : doc["needs"]) CHECK(n["bandwidth_gbps"].get<double>() == Approx(20 * n["bytes_per_token"].get<double>() / 1e9));
}

TEST_CASE("cli requirements: an energy limit is one of the margins, and the smallest margin ranks", "[cli][power]") {
  const auto doc = nlohmann::json::parse(run_power("requirements -m llama-3.2-1b -s battery --max-joules-per-token 0.3 --json").out);
  bool any = false;
  for (const auto& d : doc["devices"]) {
    if (d["status"] != "qualifies") continue;
    any = true;
    const double joules = d["plan"]["energy"]["joules_per_token"]["mid"];
    INFO(d["id"].get<std::string>());
    CHECK(joules <= 0.3);
    CHECK(d["margin"].get<double>() <= 0.3 / joules + 1e-9);  // never more headroom than the energy limit leaves
  }
  CHECK(any);
}

TEST_CASE("cli requirements: text report, exit 4 when no device qualifies, bad input named", "[cli][power]") {
  const auto text = run_power("requirements -m llama-3.1-8b --min-tok-s 20");
  CHECK(text.code == 0);
  CHECK(text.out.find("devices that qualify") != std::string::npos);
  CHECK(text.out.find("prefill compute:") != std::string::npos);
  CHECK(run_power("requirements -m llama-3.1-8b --min-tok-s 100000").code == 4);
  const auto unknown = run_power("requirements -m no-such-model", true);
  CHECK(unknown.code == 3);
  CHECK(unknown.out.find("no-such-model") != std::string::npos);
  CHECK(run_power("requirements -m llama-3.1-8b --min-tok-s -1").code == 2);
  CHECK(run_power("requirements -m llama-3.1-8b -s fastest", true).code == 2);
}

TEST_CASE("cli plan: energy in the document and the report; --max-power-w, --sustained and the battery scenario", "[cli][power]") {
  const auto r = run_power("plan -m llama-3.2-1b -d snapdragon-8-gen-3 --json");
  REQUIRE(r.code == 0);
  const auto doc = json_of(r);
  const auto& e = doc["chosen"]["energy"];
  REQUIRE(e["known"] == true);
  CHECK(e["joules_per_token"]["low"].get<double>() <= e["joules_per_token"]["mid"].get<double>());
  CHECK(e["joules_per_token"]["mid"].get<double>() <= e["joules_per_token"]["high"].get<double>());
  CHECK(e.contains("battery_pct_per_1k_tokens"));
  const auto text = run_power("plan -m llama-3.2-1b -d snapdragon-8-gen-3");
  CHECK(text.out.find("J/token") != std::string::npos);
  CHECK(text.out.find("% of the battery per 1,000 tokens") != std::string::npos);
  // A desktop board without a battery figure shows energy without a battery share.
  const auto pi = json_of(run_power("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --json"));
  CHECK(pi["chosen"]["energy"]["known"] == true);
  CHECK_FALSE(pi["chosen"]["energy"].contains("battery_pct_per_1k_tokens"));
  // Power cap below any plan: exit 4 and the relaxation names the limit.
  const auto capped = run_power("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --max-power-w 1 --json");
  CHECK(capped.code == 4);
  bool named = false;
  const auto capped_doc = json_of(capped);
  for (const auto& x : capped_doc["relaxations"]) named = named || x["constraint"] == "max_power_w";
  CHECK(named);
  const auto hot = json_of(run_power("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --sustained 30 --json"));
  REQUIRE(hot.contains("sustained"));
  CHECK(hot["sustained"]["minutes"] == 30.0);
  CHECK(hot["sustained"]["fraction"]["mid"].get<double>() < 1);
  CHECK(run_power("plan -m qwen2.5-0.5b -d raspberry-pi-5 --sustained 0").code == 2);
  const auto battery = json_of(run_power("plan -m llama-3.2-1b -d snapdragon-8-gen-3 -s battery --json"));
  CHECK(battery["scenario"] == "battery");
  CHECK(battery["sustained"]["minutes"] == 10.0);
}
