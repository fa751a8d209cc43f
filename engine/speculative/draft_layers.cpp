// Draft source "layers" (layer-skip / early exit, as in LayerSkip, Elhoushi et al. 2024, without
// its training recipe): the target's first k layers, then its own final norm and classifier.
// A view: no weight memory of its own, only its KV cache (k layers).
#include "engine/speculative/draft.hpp"

namespace trilemma::engine {

Result<Draft> make_layer_draft(const DraftSpec& spec, const LoadedModel& target) {
  const int total = int(target.model.layers.size());
  if (spec.layers < 1 || spec.layers >= total)
    return make_error(ErrorKind::usage, "", "draft_layers",
                      "must be in [1, " + std::to_string(total - 1) + "] for a target of " + std::to_string(total) +
                          " layers, got " + std::to_string(spec.layers));
  auto view = std::make_shared<Model>(target.model);  // copies views; storage shared
  view->layers.resize(std::size_t(spec.layers));
  view->shape.layers = std::uint32_t(spec.layers);
  Draft d;
  d.description = "layers " + std::to_string(spec.layers) + "/" + std::to_string(total);
  d.model = std::move(view);
  return d;
}

}  // namespace trilemma::engine
