// Interop with real llama.cpp (issue 15): every format `trilemma export` writes loads in
// llama.cpp (node-llama-cpp 3.22.1's prebuilt CPU binary, pinned in tests/interop/package.json
// and installed by scripts/install-deps), llama.cpp's greedy ids from BOS equal `trilemma run`'s
// on the same file, and its tokenization of fixed texts equals trilemma's. Exits 77 (skipped)
// with the reason when Node.js, the installed peer or ../shared/ is absent.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.hpp"
#include "engine/model/loaders.hpp"
#include "engine/quant/kernel_table.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "greedy_compare.hpp"
#include "run_binary.hpp"
#include "shared_data.hpp"

using namespace trilemma;
using nlohmann::json;

namespace {

const std::filesystem::path k_peer_dir = std::filesystem::path(TRILEMMA_SOURCE_DIR) / "tests" / "interop";
constexpr int k_steps = 64;
const std::vector<std::string> k_texts = {"Once upon a time", "Tom and Lily went to the park. They played!",
                                          "a  b", "The cat sat on the mat."};

struct SkipWithoutPeer {
  SkipWithoutPeer() {
    testing::require_shared_or_skip("models/stories260K.bin");
    if (std::system("node --version >/dev/null 2>&1") != 0) {
      std::printf("SKIPPED: node is not installed (the llama.cpp peer runs under Node.js >= 20)\n");
      std::exit(77);
    }
    if (!std::filesystem::exists(k_peer_dir / "node_modules" / "node-llama-cpp")) {
      std::printf("SKIPPED: %s/node_modules has no node-llama-cpp (scripts/install-deps runs npm ci there)\n",
                  k_peer_dir.c_str());
      std::exit(77);
    }
  }
} k_skip;

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

TEST_CASE("interop: llama.cpp loads every export and decodes the same greedy ids; same tokens", "[interop]") {
  const auto bin = testing::shared_file("models/stories260K.bin"), tok = testing::shared_file("models/tok512.bin");
  const std::string real = "-m " + quoted(bin.string()) + " --tokenizer " + quoted(tok.string());
  // The real model in every format export writes, and synthetic weights whose vocabulary has no
  // space piece (spaces fall back to U+2581's bytes in llama.cpp: trilemma encoded 0x20, issue 15).
  const std::vector<std::pair<std::string, std::string>> sources = {
      {real, "f32"}, {real, "f16"}, {real, "q8_0"}, {real, "q4_0"}, {"--synthetic stories260k", "f32"}};
  for (const auto& [source, weights] : sources) {
    CAPTURE(source, weights);
    const auto file = std::filesystem::temp_directory_path() / ("trilemma_interop_" + weights + ".gguf");
    const auto exported = testing::run_trilemma("export " + source + " --weights " + weights + " --out " + quoted(file.string()));
    REQUIRE(exported.code == 0);

    const auto ours = testing::run_trilemma("run -m " + quoted(file.string()) + " --prompt '' --steps " +
                                            std::to_string(k_steps) + " --threads 2 --json");
    REQUIRE(ours.code == 0);
    const auto our_ids = json::parse(ours.out)["tokens"].get<std::vector<int>>();
    REQUIRE(our_ids.size() == std::size_t(k_steps));

    std::string command = "node " + quoted((k_peer_dir / "llama_cpp_peer.mjs").string()) + " " + quoted(file.string()) +
                          " " + std::to_string(k_steps);
    for (const auto& text : k_texts) command += " " + quoted(text);
    const auto peer = testing::run_command(command + " 2>&1");
    INFO(peer.out);
    REQUIRE(peer.code == 0);
    const auto j = json::parse(peer.out);
    const auto their_ids = j["ids"].get<std::vector<int>>();
    std::size_t same = 0;
    while (same < our_ids.size() && same < their_ids.size() && our_ids[same] == their_ids[same]) ++same;
    INFO("greedy ids agree for " << same << " of " << k_steps << " tokens");
    CHECK(their_ids == our_ids);

    auto gguf = gguf::GgufFile::open(file);
    REQUIRE(gguf.ok());
    auto tokenizer = engine::Tokenizer::from_gguf(*gguf);
    REQUIRE(tokenizer.ok());
    REQUIRE(j["tokens"].size() == k_texts.size());
    for (std::size_t i = 0; i < k_texts.size(); ++i) {
      CAPTURE(k_texts[i]);
      CHECK(j["tokens"][i].get<std::vector<int>>() == tokenizer->encode(k_texts[i], false, false));
    }
    std::filesystem::remove(file);
  }
}

// The k-quants on rows that keep them (256 wide; stories260K's fall back to 32-element types):
// every tensor of a synthetic model in one k-quant type, llama.cpp's greedy ids against ours,
// teacher-forced. llama.cpp quantizes the activations to Q8_K (one scale per 256), trilemma to
// Q8_0 (one per 32), so a near-tie may flip: wherever the argmaxes differ, our logit margin
// must be under k_max_flip_margin, and most ids must agree.
TEST_CASE("interop: k-quant tensors (q2_k .. q6_k) decode as llama.cpp decodes them", "[interop]") {
  constexpr float k_max_flip_margin = 0.1f;
  const auto shape = k_peer_dir / "k256-llama.yaml";
  engine::ThreadPool pool(2);
  for (const std::string type : {"q2_k", "q3_k", "q4_k", "q5_k", "q6_k"}) {
    CAPTURE(type);
    const auto file = std::filesystem::temp_directory_path() / ("trilemma_interop_k256_" + type + ".gguf");
    const auto exported =
        testing::run_trilemma("export --synthetic " + quoted(shape.string()) + " --weights " + type + " --out " + quoted(file.string()));
    REQUIRE(exported.code == 0);
    const auto peer = testing::run_command("node " + quoted((k_peer_dir / "llama_cpp_peer.mjs").string()) + " " +
                                           quoted(file.string()) + " " + std::to_string(k_steps) + " 2>&1");
    INFO(peer.out);
    REQUIRE(peer.code == 0);
    const auto theirs = json::parse(peer.out)["ids"].get<std::vector<int>>();
    REQUIRE(theirs.size() == std::size_t(k_steps));

    auto gguf = gguf::GgufFile::open(file);
    REQUIRE(gguf.ok());
    auto model = engine::load_gguf_model(*gguf, std::nullopt, pool);
    REQUIRE(model.ok());
    for (engine::Isa isa : {engine::Isa::scalar, engine::detect_isa()}) {
      const auto d = testing::compare_greedy(*model, isa, pool, {1}, theirs);
      std::printf("%s (%s kernels): %d of %d greedy ids agree with llama.cpp", type.c_str(),
                  std::string(engine::isa_name(isa)).c_str(), d.agreeing, k_steps);
      if (d.at >= 0) std::printf("; first differs at id %d; largest logit margin where they differ %.4f", d.at, d.margin);
      std::printf("\n");
      CHECK((d.at < 0 || d.margin < k_max_flip_margin));
      CHECK(d.agreeing >= k_steps * 3 / 4);
    }
    std::filesystem::remove(file);
  }
}
