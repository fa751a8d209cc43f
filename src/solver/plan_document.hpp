// The plan document: `plan --json` writes it, `emit`, `export` and `verify` read it back.
// Schema: docs/plan-schema.md. Bump k_plan_schema_version on any incompatible change.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "solver/planner.hpp"

namespace trilemma::solver {

inline constexpr int k_plan_schema_version = 1;

nlohmann::json config_to_json(const DeploymentConfig& config);
Result<DeploymentConfig> config_from_json(const nlohmann::json& j, const std::string& file, const std::string& where);

nlohmann::json candidate_to_json(const Candidate& candidate);

nlohmann::json plan_to_json(const PlanResult& result, const models::Model& model, const devices::Device& device,
                            const Profile& profile);

// What a consumer needs back from a plan document.
struct PlanDocument {
  std::string model;    // id or path as planned
  std::string device;   // id or "host"
  std::string scenario;
  DeploymentConfig config;
  nlohmann::json predicted;  // the chosen plan's estimate block
  nlohmann::json raw;
};
Result<PlanDocument> parse_plan_document(const std::string& text, const std::string& file);

}  // namespace trilemma::solver
