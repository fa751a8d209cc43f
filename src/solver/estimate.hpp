// Predicts latency, memory and accuracy of one configuration of one model on one device, by
// combining the roofline, memory and accuracy models. Pure: no I/O once its inputs are built.
#pragma once
#include <array>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "memory/tensor_layout.hpp"
#include "models/model.hpp"
#include "roofline/derating.hpp"
#include "types/deployment.hpp"
#include "types/estimate.hpp"

namespace trilemma::solver {

// Everything about a model that does not depend on the configuration, computed once per plan:
// weight bytes for every format (the tensor walk is the expensive part).
struct PreparedModel {
  const models::Model* model = nullptr;
  std::array<memory::WeightBytes, 13> weights{};  // indexed by WeightFormat
  std::optional<memory::WeightBytes> stored;     // GGUF: the file's real bytes
  double active_params = 0;
  static PreparedModel prepare(const models::Model& model);
  const memory::WeightBytes& bytes(WeightFormat format) const;
};

struct PreparedDevice {
  const devices::Device* device = nullptr;
  double usable_bytes = 0;
  roofline::OffloadTier offload;
  static PreparedDevice prepare(const devices::Device& device);
  // Derating per (backend, weight format), looked up once: the tables are YAML.
  const roofline::Derating& derating(const std::string& backend, WeightFormat weights) const;
  // Attention's fraction of the f32 compute peak per (backend, KV format), looked up once.
  Range attention_fraction(const std::string& backend, TensorType kv, roofline::AttentionPhase phase) const;

 private:
  mutable std::deque<std::pair<std::pair<std::string, WeightFormat>, roofline::Derating>> m_derating;  // stable refs
  struct AttentionKey {
    std::string backend;
    TensorType kv;
    roofline::AttentionPhase phase;
    bool operator==(const AttentionKey&) const = default;
  };
  mutable std::vector<std::pair<AttentionKey, Range>> m_attention;
};

// Acceptance-rate prior for a draft source, with its basis.
struct AcceptancePrior {
  Range rate;
  std::string basis;
};
AcceptancePrior acceptance_prior(const DeploymentConfig& config);

// `with_basis` = false skips the explanatory text (the search evaluates thousands of plans and
// reports a few).
Estimate estimate(const PreparedModel& model, const PreparedDevice& device, const DeploymentConfig& config,
                  const PreparedModel* draft = nullptr, bool with_basis = true);

}  // namespace trilemma::solver
