// Where draft tokens come from (one file per source; the table in draft.cpp):
//   model:  a separate, smaller model with the same vocabulary (draft_model.cpp); token pieces
//           are compared, not just counted.
//   self:   the target's own weights converted to a lower-bit format (draft_self.cpp).
//   layers: the target's first k layers, then its final norm and classifier (layer-skip,
//           draft_layers.cpp); shares the target's weight memory.
// The draft always runs with its own KV cache.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/source/model_source.hpp"
#include "engine/quant/kernel_table.hpp"
#include "types/deployment.hpp"

namespace trilemma::engine {

struct DraftSpec {
  DraftKind kind = DraftKind::none;
  ModelSource model;                    // kind == model: the draft's file or synthetic shape
  std::optional<TensorType> weights;    // self: required; model: as stored when nullopt
  int layers = 0;                       // layers: k, 1 <= k < target layers
};

struct Draft {
  std::shared_ptr<Model> model;          // a view of the target's weights for `layers`
  std::uint64_t extra_weight_bytes = 0;  // weight memory beyond the target's
  std::string description;               // "self q4_0", "layers 2/5", "model stories15M"
};

// REQUIRES: target packed for `isa` (layer-skip drafts share its matrices as they are).
Result<Draft> make_draft(const DraftSpec& spec, const LoadedModel& target, const ModelSource& target_source, ThreadPool& pool, Isa isa);

Result<Draft> make_model_draft(const DraftSpec& spec, const LoadedModel& target, ThreadPool& pool, Isa isa);
Result<Draft> make_self_draft(const DraftSpec& spec, const LoadedModel& target, const ModelSource& target_source, ThreadPool& pool, Isa isa);
Result<Draft> make_layer_draft(const DraftSpec& spec, const LoadedModel& target);

}  // namespace trilemma::engine
