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
#include "engine/model/loaders.hpp"
#include "greedy_compare.hpp"
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
      std::vector<int> prompt{k_bos};
      prompt.insert(prompt.end(), ref.prompt.begin(), ref.prompt.end());
      const auto d = trilemma::testing::compare_greedy(*m, isa, pool, prompt, ref.ids);
      if (d.at >= 0)
        std::printf("%s (%s kernels): first differs from llama.cpp at id %d, largest logit margin where they differ %.4f\n",
                    path.filename().c_str(), std::string(isa_name(isa)).c_str(), d.at, d.margin);
      CHECK((d.at < 0 || d.margin < k_max_flip_margin));
    }
  }
}
