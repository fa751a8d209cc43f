// trilemma's own formats: the plan document as JSON (docs/plan-schema.md) and the same tree as
// YAML. They express every choice, so they report nothing as not expressed.
#include <yaml-cpp/yaml.h>

#include "emitters/emit_functions.hpp"

namespace trilemma::emitters {
namespace {

void to_yaml(YAML::Emitter& out, const nlohmann::json& j) {
  if (j.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [k, v] : j.items()) {
      out << YAML::Key << k << YAML::Value;
      to_yaml(out, v);
    }
    out << YAML::EndMap;
  } else if (j.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& v : j) to_yaml(out, v);
    out << YAML::EndSeq;
  } else if (j.is_string()) {
    out << YAML::DoubleQuoted << j.get<std::string>();
  } else if (j.is_boolean()) {
    out << j.get<bool>();
  } else if (j.is_number_unsigned()) {
    out << j.get<std::uint64_t>();
  } else if (j.is_number_integer()) {
    out << j.get<std::int64_t>();
  } else if (j.is_number_float()) {
    out << j.get<double>();
  } else {
    out << YAML::Null;
  }
}

}  // namespace

Result<Emission> emit_plan_json(const solver::PlanDocument& plan) {
  Emission e;
  e.files.push_back({"plan", "", plan.raw.dump(2) + "\n"});
  return e;
}

Result<Emission> emit_plan_yaml(const solver::PlanDocument& plan) {
  YAML::Emitter out;
  out.SetDoublePrecision(10);
  to_yaml(out, plan.raw);
  if (!out.good()) return make_error(ErrorKind::internal, "", "", "YAML emitter: " + out.GetLastError());
  Emission e;
  e.files.push_back({"plan", "", "# trilemma plan document (docs/plan-schema.md) as YAML\n" + std::string(out.c_str()) + "\n"});
  return e;
}

}  // namespace trilemma::emitters
