#include "engine/speculative/draft.hpp"

namespace trilemma::engine {

Result<Draft> make_draft(const DraftSpec& spec, const LoadedModel& target, const ModelSource& target_source, ThreadPool& pool, Isa isa) {
  switch (spec.kind) {  // the one place that picks a draft source
    case DraftKind::model: return make_model_draft(spec, target, pool, isa);
    case DraftKind::self: return make_self_draft(spec, target, target_source, pool, isa);
    case DraftKind::layers: return make_layer_draft(spec, target);
    case DraftKind::none: break;
  }
  return make_error(ErrorKind::usage, "", "draft", "no draft source chosen");
}

}  // namespace trilemma::engine
