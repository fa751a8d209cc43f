// Every emitter on plans with hostile fields (reliability D4): the input rewrites a real plan's
// model path, ids, draft model and configuration, the plan is read back as `emit` reads it, and
// each emitter runs on what the reader accepts. Oracle: the emitted files mean exactly the plan
// (tests/emitted_syntax.hpp): the llama.cpp script and argument file split into the emitter's
// settings with nothing the shell would expand, the Modelfile and environment file read back to
// them, MLC's chat config holds them, the plan JSON reads back to the same configuration, and no
// file holds a control character.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "../tests/emitted_syntax.hpp"
#include "devices/device_db.hpp"
#include "emitters/emitter.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"
#include "solver/planner.hpp"
#include "solver/profile.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

namespace {

// Real plans to start from: one per corner, one with a draft model.
std::vector<nlohmann::json> base_plans() {
  std::vector<nlohmann::json> out;
  auto catalog = models::builtin_models().value();
  for (const auto& [model_id, device_id, scenario, draft] :
       std::vector<std::tuple<std::string, std::string, std::string, bool>>{{"llama-3.2-1b", "apple-m2", "latency", false},
                                                                            {"llama-3.2-3b", "raspberry-pi-5", "memory", false},
                                                                            {"llama-3.1-8b", "rtx-4090", "accuracy", true}}) {
    auto model = models::resolve_model(model_id).value();
    auto device = devices::resolve_device(device_id).value();
    auto profile = solver::resolve_profile(scenario).value();
    solver::PlanRequest req;
    req.model = &model, req.device = &device, req.profile = profile, req.catalog = &catalog;
    if (draft) req.pins.speculative = true, req.pins.draft_kind = DraftKind::model, req.pins.draft_model = "llama-3.2-1b";
    auto result = solver::plan(req);
    FUZZ_CHECK(result.ok() && result->chosen);  // else the harness cannot run: not a finding
    auto doc = solver::plan_to_json(*result, model, device, profile);
    // The front and runners-up (95% of the text) are not what emitters read: one entry each.
    for (const char* list : {"front", "runners_up"})
      if (doc[list].size() > 1) doc[list] = nlohmann::json::array({doc[list][0]});
    out.push_back(std::move(doc));
  }
  return out;
}

std::string any_text(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return "/models/" + in.ConsumeRandomLengthString(40) + ".gguf";
    case 1: return in.ConsumeRandomLengthString(40);
    case 2: return "~/" + in.ConsumeRandomLengthString(20);
    default: return "/a b/$(x) `y`; 'q' \"d\" \\ * ?" + in.ConsumeRandomLengthString(8);
  }
}


}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<nlohmann::json> bases = base_plans();
  FuzzedDataProvider in(data, size);
  nlohmann::json doc = bases[in.ConsumeIntegralInRange<std::size_t>(0, bases.size() - 1)];
  auto& config = doc["chosen"]["config"];
  const int edits = in.ConsumeIntegralInRange<int>(1, 6);
  for (int i = 0; i < edits; ++i) {
    switch (in.ConsumeIntegralInRange<int>(0, 9)) {
      case 0: doc["model"]["path"] = any_text(in); break;
      case 1: doc["model"]["id"] = in.ConsumeRandomLengthString(24); break;
      case 2: doc["device"]["id"] = in.ConsumeRandomLengthString(24); break;
      case 3: doc["model"]["architecture"] = in.ConsumeRandomLengthString(16); break;
      case 4: config["context"] = in.ConsumeIntegral<std::int64_t>(); break;
      case 5: config["prompt"] = in.ConsumeIntegral<std::int64_t>(); break;
      case 6: config["threads"] = in.ConsumeIntegral<std::int64_t>(); break;
      case 7: config["weights"] = in.ConsumeRandomLengthString(8); break;
      case 8: config["kv_type"] = in.PickValueInArray({"f32", "f16", "bf16", "q8_0", "q4_0", "int3"}); break;
      default:
        if (config["speculative"].value("kind", "") == "model") config["speculative"]["draft_model"] = any_text(in);
        else config["kv_strategy"] = in.PickValueInArray({"contiguous", "paged", "sliding", "offload", "other"});
        break;
    }
  }
  // As a file holds it: JSON text is UTF-8, so bytes that are not become U+FFFD.
  auto plan = solver::parse_plan_document(doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "plan.json");
  if (!plan) return 0;
  for (const auto& emitter : emitters::emitters()) {
    auto e = emitter.emit(*plan);
    if (!e) continue;
    for (const auto& f : e->files) FUZZ_CHECK(!testing::has_control_character(f.content));
    (void)emitters::emission_to_json(emitter, *plan, *e, {}).dump();
    const std::string name(emitter.name);
    if (name == "llama.cpp") {
      FUZZ_CHECK(e->files.size() == 2);
      FUZZ_CHECK(testing::parse_script(e->files[0].content) == e->settings);
      FUZZ_CHECK(testing::parse_args_file(e->files[1].content) == e->settings);
    } else if (name == "ollama") {
      FUZZ_CHECK(e->files.size() == 2);
      FUZZ_CHECK(testing::parse_modelfile(e->files[0].content, e->files[1].content) == e->settings);
    } else if (name == "mlc-llm") {
      const auto j = nlohmann::json::parse(e->files[0].content);
      for (const auto& [k, v] : e->settings) {
        FUZZ_CHECK(j.contains(k));
        if (j[k].is_string()) FUZZ_CHECK(j[k].get<std::string>() == v);
        else FUZZ_CHECK(j[k].is_number() && std::stod(v) == j[k].get<double>());
      }
    } else if (name == "plan-json") {
      auto again = solver::parse_plan_document(e->files[0].content, "again.json");
      FUZZ_CHECK(again.ok() && describe(again->config) == describe(plan->config) && again->model == plan->model);
    } else if (name == "plan-yaml") {
      (void)YAML::Load(e->files[0].content);  // throws (a finding) if the YAML is malformed
    }
  }
  return 0;
}
