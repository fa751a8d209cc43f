// The inverse question (`trilemma requirements`): what a device needs to run a model under a
// scenario's limits, and which devices of the database meet them. Two halves:
// - per weight format and KV family, the figures a target must reach, from the model's shape
//   alone: effective bandwidth = tok/s x bytes per token, effective compute = FLOPs / time (per
//   compute path, and its peak at that path's mid derating), memory = weights + KV + scratch;
// - per device, `plan` itself under the same request: a device qualifies exactly when plan
//   finds a feasible configuration on it, with its margins; a near-miss fails one constraint
//   only, and says what it lacks in hardware terms.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "solver/planner.hpp"

namespace trilemma::solver {

struct PathNeed {
  ComputePath path;
  Backend backend;             // the backend that reaches the largest share of this path
  double compute_fraction = 0;  // that backend's mid derating on the path (devices/derating.yaml)
  double peak_gops = 0;         // the path's peak a device needs: effective / fraction
};

struct FormatNeed {
  WeightFormat weights;
  TensorType kv;
  double bytes_per_token = 0;       // weights and KV read per decoded token at the context's end
  double bandwidth_gbps = 0;        // effective, for min_decode_tok_s (0 without one)
  double decode_gops = 0;           // effective compute for min_decode_tok_s
  double prefill_gops = 0;          // effective compute for the prompt within max_ttft_ms (0 without one)
  std::vector<PathNeed> paths;      // prefill's peak need on each path that runs the format
  double memory_gib = 0;            // weights + KV + scratch, before runtime and OS reserve
  // The RAM a device of each class needs: memory plus the CPU runtime's, over the share of RAM
  // the class leaves to apps (devices/classes.yaml, devices/derating.yaml).
  std::vector<std::pair<std::string, double>> ram_gib_by_class;
  double loss_points = 0;           // the accuracy model's mid
  std::vector<std::string> excluded;  // the limits the format breaks on any device ("max_loss_points")
};

struct DeviceVerdict {
  const devices::Device* device = nullptr;
  bool qualifies = false;
  bool near_miss = false;               // infeasible, and relaxing one constraint would do
  std::optional<Candidate> plan;        // the chosen plan (qualifies) or the best near-miss plan
  double margin = 0;                    // qualifies: the smallest headroom ratio (>= 1); else the shortfall ratio (< 1)
  std::vector<std::string> margins;     // "tok/s x1.8", "memory 3.1 GiB free"
  std::vector<std::string> lacks;       // what a near-miss or a far miss lacks
};

struct RequirementsRequest {
  const models::Model* model = nullptr;
  Profile profile;
  Constraints budgets;
  std::uint32_t context = 0, prompt = 0;
  std::optional<double> sustained_minutes;
  const std::vector<devices::Device>* devices = nullptr;
  const std::vector<models::Model>* catalog = nullptr;
};

struct Requirements {
  std::uint32_t context = 0, prompt = 0;
  Constraints limits;                 // the profile's and the user's, merged
  std::vector<FormatNeed> needs;      // weight formats x KV families
  std::vector<DeviceVerdict> devices;  // qualifying (by margin), near-misses (by shortfall), the rest
};

Result<Requirements> requirements(const RequirementsRequest& request);

// The inverse formulas, for one format, at `tok_s` and a `ttft_ms` (either 0 = no limit).
FormatNeed format_need(const PreparedModel& pm, const DeploymentConfig& config, double tok_s, double ttft_ms);

}  // namespace trilemma::solver
