#include "engine/source/model_source.hpp"

#include <cstring>
#include <fstream>

#include "engine/gguf/mapped_file.hpp"
#include "engine/model/loaders.hpp"

namespace trilemma::engine {
namespace {

bool is_gguf(const std::filesystem::path& path) {
  if (gguf::input_file_problem(path)) return false;  // the loader reports it
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
}

}  // namespace

Result<LoadedModel> load_model(const ModelSource& src, ThreadPool& pool) {
  if (src.model_path.has_value() == src.synthetic_shape.has_value())
    return make_error(ErrorKind::usage, "", "model", "give exactly one of a model file or a synthetic shape");
  std::optional<Model> model;
  std::optional<Tokenizer> tokenizer;
  if (src.synthetic_shape) {
    const std::string name = src.synthetic_name.empty() ? "synthetic" : src.synthetic_name;
    TRILEMMA_TRY(m, make_synthetic(*src.synthetic_shape, name, src.weights, k_synthetic_seed, pool));
    model = std::move(m);
    if (!src.tokenizer_path) tokenizer = Tokenizer::synthetic(int(model->shape.vocab));
  } else if (auto problem = gguf::input_file_problem(*src.model_path)) {
    return *problem;
  } else if (is_gguf(*src.model_path)) {
    TRILEMMA_TRY(file, gguf::GgufFile::open(*src.model_path));
    TRILEMMA_TRY(m, load_gguf_model(file, src.weights, pool));
    model = std::move(m);
    if (!src.tokenizer_path) {
      TRILEMMA_TRY(t, Tokenizer::from_gguf(file));
      tokenizer = std::move(t);
    }
  } else if (src.model_path->extension() == ".gguf") {
    // Named as GGUF but without its magic: say so, rather than reading it as llama2.c.
    return make_error(ErrorKind::input, src.model_path->string(), "byte 0", "not a GGUF file: it does not start with \"GGUF\"");
  } else {
    TRILEMMA_TRY(m, load_llama2c(*src.model_path, src.weights, pool));
    model = std::move(m);
    if (!src.tokenizer_path)
      return make_error(ErrorKind::usage, src.model_path->string(), "tokenizer",
                        "a llama2.c checkpoint has no vocabulary: give a tokenizer file");
  }
  if (src.tokenizer_path) {  // a llama2.c tokenizer.bin, or a GGUF file's vocabulary
    if (auto problem = gguf::input_file_problem(*src.tokenizer_path)) return *problem;
    if (is_gguf(*src.tokenizer_path)) {
      TRILEMMA_TRY(file, gguf::GgufFile::open(*src.tokenizer_path));
      TRILEMMA_TRY(t, Tokenizer::from_gguf(file));
      tokenizer = std::move(t);
    } else {
      TRILEMMA_TRY(t, Tokenizer::load_llama2c(*src.tokenizer_path));
      tokenizer = std::move(t);
    }
  }
  if (tokenizer->vocab_size() != int(model->shape.vocab))
    return make_error(ErrorKind::input, src.tokenizer_path ? src.tokenizer_path->string() : model->name, "vocabulary",
                      "tokenizer has " + std::to_string(tokenizer->vocab_size()) + " tokens, the model's vocabulary is " +
                          std::to_string(model->shape.vocab));
  return LoadedModel{std::move(*model), std::move(*tokenizer)};
}

}  // namespace trilemma::engine
