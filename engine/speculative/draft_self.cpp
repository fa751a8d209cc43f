// Draft source "self": the target's weights again, converted to a lower-bit format (e.g. an
// f32 or q8_0 target drafting with its own tq2_t or q4_0 copy). Costs the copy's memory.
#include "engine/model/prepare.hpp"
#include "engine/speculative/draft.hpp"

namespace trilemma::engine {

Result<Draft> make_self_draft(const DraftSpec& spec, const LoadedModel& target, const ModelSource& target_source, ThreadPool& pool, Isa isa) {
  if (!spec.weights)
    return make_error(ErrorKind::usage, "", "draft_weights", "self-speculation needs a weight format for the draft copy");
  ModelSource src = target_source;
  src.weights = spec.weights;
  TRILEMMA_TRY(loaded, load_model(src, pool));
  (void)target;
  pack_for_isa(loaded.model, isa, pool);
  Draft d;
  d.extra_weight_bytes = loaded.model.weight_bytes();
  d.description = "self " + loaded.model.weights_name();
  d.model = std::make_shared<Model>(std::move(loaded.model));
  return d;
}

}  // namespace trilemma::engine
