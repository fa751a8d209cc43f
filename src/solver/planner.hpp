// The constraint solver: enumerates the configuration space of one model on one device, drops
// what violates hard constraints, ranks the rest by the scenario's objective, computes the
// Pareto front over (decode tok/s, memory, quality loss) and, when nothing is feasible, says
// per constraint the smallest relaxation that would make a plan feasible.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "models/model.hpp"
#include "power/sustained.hpp"
#include "solver/estimate.hpp"
#include "solver/profile.hpp"

namespace trilemma::solver {

// Dimensions pinned from the command line; unset ones are searched.
struct Pins {
  std::optional<WeightFormat> weights;
  std::optional<TensorType> kv;
  std::optional<KvStrategy> strategy;
  // The strategies' parameters by their plan-document key (KvStrategyParam::key): "window".
  std::map<std::string, double, std::less<>> kv_params;
  std::optional<Backend> backend;
  std::optional<std::uint32_t> threads;
  std::optional<bool> speculative;          // false = --no-speculative
  std::optional<DraftKind> draft_kind;
  std::optional<std::string> draft_model;
  std::optional<std::uint32_t> draft_len;
  std::optional<bool> imatrix;              // unset: wherever the loss model says it helps
};

struct PlanRequest {
  const models::Model* model = nullptr;
  const devices::Device* device = nullptr;
  Profile profile;
  std::uint32_t context = 0;  // 0 = the profile's default
  std::uint32_t prompt = 0;
  Constraints budgets;        // user budgets, applied on top of the profile's
  Pins pins;
  // Plan for the speed the device holds after this many minutes of continuous generation;
  // unset = the profile's default, and without one the first minute's speed.
  std::optional<double> sustained_minutes;
  const std::vector<models::Model>* catalog = nullptr;  // draft candidates and smaller-model advice
};

// A limit a plan breaks: the constraint as profiles and limits() spell it (or device_memory,
// allowed_weights, allowed_kv), and what it breaks it by for the plans a report shows.
struct Violation {
  std::string_view constraint;  // names a static table entry or literal
  std::string detail;           // "140 ms > 100"; empty where the search needed only the name
  std::string text() const { return detail.empty() ? std::string(constraint) : std::string(constraint) + ": " + detail; }
};

struct Candidate {
  DeploymentConfig config;
  Estimate estimate;
  std::vector<Violation> violations;
  double tok_s() const { return estimate.latency.decode_tok_s.mid; }
  double ttft_ms() const { return estimate.latency.ttft_ms.mid; }
  double memory_gib() const { return estimate.memory.total_bytes / 1073741824.0; }
  double loss_points() const { return estimate.accuracy.points.mid; }
  // Energy figures; +infinity where no power figure covers the plan (it cannot be shown to meet a limit).
  double joules_per_token() const;
  double power_w() const;  // the higher of the two phases' draw
  double metric(Metric m) const;
};

struct Relaxation {
  std::string constraint;  // "max_memory_gib", "device_memory", ...
  std::string message;     // "needs 5.1 GiB; the device offers 3.6 GiB"
  std::optional<Candidate> plan;  // the best plan if this constraint were relaxed
};

struct PlanResult {
  std::optional<Candidate> chosen;
  std::vector<Candidate> runners_up;  // next best distinct plans
  std::vector<Candidate> front;       // Pareto-optimal among device-feasible plans
  std::string gives_up;               // latency | memory | accuracy | none
  std::string binding;                // constraint that kept a better plan out, or ""
  std::vector<Relaxation> relaxations;  // when nothing is feasible
  std::vector<std::string> smaller_models;  // catalog models of the same family that would fit
  std::vector<std::string> skipped;         // backends left out, and why
  std::size_t evaluated = 0, feasible = 0;
  std::uint32_t context = 0, prompt = 0;
  std::optional<power::Sustained> sustained;  // when planned for sustained load
};

Result<PlanResult> plan(const PlanRequest& request);

// The context and prompt a plan is made for: the request's, else the profile's defaults (the
// context no longer than the model was trained for); fails when the request asks for more.
struct ContextWindow {
  std::uint32_t context = 0, prompt = 0;
};
Result<ContextWindow> context_window(const Profile& profile, const models::Model& model, std::uint32_t context,
                                     std::uint32_t prompt);

// A profile's constraints and the user's budgets merged: the tighter of each limit wins, the
// user's format lists replace the profile's.
Constraints merge_constraints(const Constraints& profile, const Constraints& budgets);

// The corner of the triangle a plan gives up, against the founding note's thresholds:
// latency: TTFT < 100 ms and > 20 tok/s; memory: <= 4 GiB; accuracy: loss <= 1 point.
std::string corner_given_up(const Candidate& c);

}  // namespace trilemma::solver
