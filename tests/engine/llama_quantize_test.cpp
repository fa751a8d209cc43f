// The files people have: stories260K as llama.cpp's `llama-quantize` writes it in eleven recipes
// (../shared/models/llama-quantize/, with the greedy ids llama.cpp itself generates from each).
// Every file must load, and its 64 greedy ids must match llama.cpp's; where a near-tie flips
// (another summation order), the logit margin there is printed and must be under 0.1.
// Exits 77 when ../shared is absent.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "engine/gguf/gguf_file.hpp"
#include "engine/kv/kv_pages.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model/transformer.hpp"
#include "engine/sampling/sampler.hpp"
#include "shared_data.hpp"

using namespace trilemma;
using namespace trilemma::engine;
using trilemma::testing::shared_file;

namespace {

const bool k_have_shared = (trilemma::testing::require_shared_or_skip("models/llama-quantize"), true);

constexpr int k_bos = 1;
constexpr float k_max_flip_margin = 0.1f;

struct Reference {
  std::vector<int> prompt, ids;
};

Reference reference_of(const std::filesystem::path& gguf) {
  auto json_path = gguf;
  json_path.replace_extension(".llamacpp-greedy.json");
  std::ifstream in(json_path);
  REQUIRE(in.good());
  const auto j = nlohmann::json::parse(in);
  return {j.at("prompt").get<std::vector<int>>(), j.at("ids").get<std::vector<int>>()};
}

struct Divergence {
  int at = -1;
  float margin = 0;  // logit(ours) - logit(llama.cpp's) there
};

// BOS + the prompt, then greedy; after a divergence llama.cpp's id is fed back, so later
// positions are still compared on the same context.
Divergence compare_greedy(const Model& m, Isa isa, ThreadPool& pool, const Reference& ref) {
  const auto& s = m.shape;
  Transformer tf(m, pool, isa, make_contiguous_f32(int(s.layers), 256, int(s.heads), int(s.kv_heads), int(s.head_dim)));
  std::vector<int> prompt{k_bos};
  prompt.insert(prompt.end(), ref.prompt.begin(), ref.prompt.end());
  auto logits = tf.forward(prompt, 0);
  REQUIRE(logits.ok());
  Divergence d;
  int pos = int(prompt.size());
  for (std::size_t i = 0; i < ref.ids.size(); ++i) {
    const int ours = argmax(*logits);
    const int theirs = ref.ids[i];
    if (ours != theirs && d.at < 0) d.at = int(i), d.margin = (*logits)[std::size_t(ours)] - (*logits)[std::size_t(theirs)];
    logits = tf.forward({&theirs, 1}, pos++);
    REQUIRE(logits.ok());
  }
  return d;
}

}  // namespace

TEST_CASE("engine: every llama-quantize recipe of stories260K loads and decodes as llama.cpp does", "[engine][shared]") {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(shared_file("models/llama-quantize")))
    if (e.path().extension() == ".gguf") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 11);
  ThreadPool pool(2);
  for (const auto& path : files) {
    CAPTURE(path.filename().string());
    auto f = gguf::GgufFile::open(path);
    REQUIRE(f.ok());
    auto m = load_gguf_model(*f, std::nullopt, pool);
    if (!m.ok()) FAIL(m.error().message);
    const Reference ref = reference_of(path);
    REQUIRE(ref.ids.size() == 64);
    for (Isa isa : {Isa::scalar, detect_isa()}) {
      const Divergence d = compare_greedy(*m, isa, pool, ref);
      if (d.at >= 0)
        std::printf("%s (%s kernels): first differs from llama.cpp at id %d, logit margin %.4f\n",
                    path.filename().c_str(), std::string(isa_name(isa)).c_str(), d.at, d.margin);
      CHECK((d.at < 0 || d.margin < k_max_flip_margin));
    }
  }
}
