// Draft source "model": a separate model. Its tokenizer must have the target's vocabulary,
// piece for piece; a llama2.c draft without its own tokenizer file is read with none given and
// refused by load_model.
#include <algorithm>

#include "engine/model/prepare.hpp"
#include "engine/speculative/draft.hpp"

namespace trilemma::engine {

Result<Draft> make_model_draft(const DraftSpec& spec, const LoadedModel& target, ThreadPool& pool, Isa isa) {
  ModelSource src = spec.model;
  src.weights = spec.weights;
  TRILEMMA_TRY(loaded, load_model(src, pool));
  const std::string name = src.model_path ? src.model_path->string() : loaded.model.name;
  if (loaded.model.shape.vocab != target.model.shape.vocab)
    return make_error(ErrorKind::input, name, "draft vocabulary",
                      "the draft model has " + std::to_string(loaded.model.shape.vocab) + " tokens, the target " +
                          std::to_string(target.model.shape.vocab));
  const auto a = loaded.tokenizer.gguf_pieces(), b = target.tokenizer.gguf_pieces();
  const auto diff = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (diff.first != a.end())
    return make_error(ErrorKind::input, name, "draft vocabulary",
                      "token " + std::to_string(diff.first - a.begin()) + " is \"" + *diff.first + "\" in the draft and \"" +
                          *diff.second + "\" in the target: speculative decoding needs the same vocabulary");
  if (loaded.tokenizer.bos() != target.tokenizer.bos() || loaded.tokenizer.eos() != target.tokenizer.eos())
    return make_error(ErrorKind::input, name, "draft vocabulary", "BOS/EOS ids differ from the target's");
  pack_for_isa(loaded.model, isa, pool);
  Draft d;
  d.extra_weight_bytes = loaded.model.weight_bytes();
  d.description = "model " + loaded.model.name + " (" + loaded.model.weights_name() + ")";
  d.model = std::make_shared<Model>(std::move(loaded.model));
  return d;
}

}  // namespace trilemma::engine
