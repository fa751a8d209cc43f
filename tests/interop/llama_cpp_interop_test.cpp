// Interop with real llama.cpp (issue 15): every format `trilemma export` writes loads in
// llama.cpp (node-llama-cpp 3.22.1's prebuilt CPU binary, pinned in tests/interop/package.json
// and installed by scripts/install-deps), llama.cpp's greedy ids from BOS equal `trilemma run`'s
// on the same file, and its tokenization of fixed texts equals trilemma's. Exits 77 (skipped)
// with the reason when Node.js, the installed peer or ../shared/ is absent.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.hpp"
#include "engine/gguf/gguf_writer.hpp"
#include "engine/model/loaders.hpp"
#include "engine/quant/kernel_table.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/unicode_classes.hpp"
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
// The llama.cpp recipes (q3_k_m, q4_k_m, q5_k_m) mix those types tensor by tensor (q6_k and q5_k
// where llama-quantize keeps more bits); they must decode alike too.
TEST_CASE("interop: k-quant tensors (q2_k .. q6_k) and recipes decode as llama.cpp decodes them", "[interop]") {
  constexpr float k_max_flip_margin = 0.1f;
  const auto shape = k_peer_dir / "k256-llama.yaml";
  engine::ThreadPool pool(2);
  for (const std::string type : {"q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "q3_k_m", "q4_k_m", "q5_k_m"}) {
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

namespace {

// BPE merges learned from `text` (the most frequent adjacent pair inside llama3 words, the
// smallest spelling on ties), so the vocabulary has real multi-byte words to merge into.
std::vector<std::string> learn_merges(const std::string& text, int count) {
  std::vector<std::vector<std::string>> words;
  const auto pre = *engine::find_pre_tokenizer("llama-bpe");
  for (const auto& w : engine::pre_tokenize(pre, text)) {
    std::vector<std::string> symbols;
    for (const char32_t cp : engine::unicode::code_points(engine::ByteLevelBpe::from_bytes(w)))
      engine::unicode::append_utf8(cp, symbols.emplace_back());
    words.push_back(std::move(symbols));
  }
  std::vector<std::string> merges;
  while (int(merges.size()) < count) {
    std::map<std::pair<std::string, std::string>, int> pairs;
    for (const auto& w : words)
      for (std::size_t i = 0; i + 1 < w.size(); ++i) ++pairs[{w[i], w[i + 1]}];
    if (pairs.empty()) break;
    auto best = pairs.begin();
    for (auto it = pairs.begin(); it != pairs.end(); ++it)
      if (it->second > best->second) best = it;
    merges.push_back(best->first.first + " " + best->first.second);
    for (auto& w : words)
      for (std::size_t i = 0; i + 1 < w.size(); ++i)
        if (w[i] == best->first.first && w[i + 1] == best->first.second) {
          w[i] += w[i + 1];
          w.erase(w.begin() + std::ptrdiff_t(i) + 1);
        }
  }
  return merges;
}

}  // namespace

// Byte-level BPE (GGUF model "gpt2": Llama 3, Qwen, SmolLM): a 512-token vocabulary learned
// from the shared evaluation text and the texts below, written with each pre-tokenizer trilemma knows, embedded in
// a model by `trilemma export --tokenizer VOCAB.gguf`; llama.cpp's tokenization of texts that
// exercise every rule (contractions in both cases, digit runs, punctuation before line breaks,
// runs of spaces, tabs, non-ASCII letters and symbols) must equal trilemma's.
TEST_CASE("interop: byte-level BPE vocabularies (llama3, qwen2, gpt2 pre-tokenizers) tokenize as llama.cpp does", "[interop]") {
  const auto eval_text = testing::shared_file("models/eval-stories.txt");
  const std::string training = testing::run_command("cat " + quoted(eval_text.string())).out;
  REQUIRE(training.size() > 1000);
  std::vector<std::string> texts = {
      "Once upon a time, there was a little girl named Lily.",
      "I'm sure you're right; DON'T you'LL see? We'd 've 'Sunday 'Twas WE'VEry",
      "12345 67 8.5e10 2026-12-03",
      "Wow!!\n\nThe end...\r\n  \n  next   line   ",
      "\ttabs\tand  double  spaces ",
      "x \n \n y\t\n\t\nz",
      "caf\xC3\xA9 na\xC3\xAFve Gr\xC3\xBC\xC3\x9F" "e \xE6\x9D\xB1\xE4\xBA\xAC\xF0\x9F\x99\x82 \xD9\xA3\xD9\xA4 \xC2\xBD",
      "a\xC2\xA0" "b \xE2\x80\x94 <|end_of_text|> x"};
  // Trained on the texts too, so merges cross every boundary a rule draws (digit runs, space
  // runs, punctuation with line breaks): a word cut elsewhere would tokenize differently.
  std::string corpus = training;
  for (int k = 0; k < 20; ++k)
    for (const auto& t : texts) corpus += t;
  const std::vector<std::string> merges = learn_merges(corpus, 253);
  REQUIRE(merges.size() == 253);
  std::vector<std::string> pieces;
  for (int b = 0; b < 256; ++b) pieces.push_back(engine::ByteLevelBpe::from_bytes(std::string(1, char(b))));
  for (const auto& m : merges) {  // two merges may spell the same piece: one token each
    const std::string piece = m.substr(0, m.find(' ')) + m.substr(m.find(' ') + 1);
    if (std::find(pieces.begin(), pieces.end(), piece) == pieces.end()) pieces.push_back(piece);
  }
  // A whole word of a text the merges never saw, so no merge sequence reaches it: llama3's
  // ignore_merges takes it whole, the others spell it from smaller pieces.
  const std::string unseen = engine::ByteLevelBpe::from_bytes(" Xylophone");
  if (std::find(pieces.begin(), pieces.end(), unseen) == pieces.end()) pieces.push_back(unseen);
  texts.push_back("a Xylophone, Xylophones");
  const std::size_t normal = pieces.size();
  for (const char* special : {"<|begin_of_text|>", "<|end_of_text|>"}) pieces.push_back(special);
  while (pieces.size() < 512) pieces.push_back("<|reserved_" + std::to_string(pieces.size()) + "|>");
  std::vector<std::int32_t> types(pieces.size(), 1);
  for (std::size_t i = normal; i < pieces.size(); ++i) types[i] = 3;
  for (const char* pre_name : {"llama-bpe", "qwen2", "gpt-2"}) {
    CAPTURE(pre_name);
    const auto pre = engine::find_pre_tokenizer(pre_name);
    REQUIRE(pre.has_value());
    const int bos = int(normal);
    const auto tok = engine::Tokenizer::byte_level(pieces, types, engine::ByteLevelBpe(pre_name, *pre, merges), bos, bos + 1, true);
    gguf::GgufWriter vocab_writer;
    tok.write_to(vocab_writer);
    const auto vocab = std::filesystem::temp_directory_path() / ("trilemma_interop_vocab_" + std::string(pre_name) + ".gguf");
    const auto model = std::filesystem::temp_directory_path() / ("trilemma_interop_bpe_" + std::string(pre_name) + ".gguf");
    REQUIRE(vocab_writer.write(vocab).ok());
    const auto exported = testing::run_trilemma("export --synthetic " + quoted((k_peer_dir / "k256-llama.yaml").string()) +
                                                " --tokenizer " + quoted(vocab.string()) + " --weights f32 --out " + quoted(model.string()));
    INFO(exported.out);
    REQUIRE(exported.code == 0);
    std::string command = "node " + quoted((k_peer_dir / "llama_cpp_peer.mjs").string()) + " " + quoted(model.string()) + " 1";
    for (const auto& text : texts) command += " " + quoted(text);
    const auto peer = testing::run_command(command + " 2>&1");
    INFO(peer.out);
    REQUIRE(peer.code == 0);
    const auto j = json::parse(peer.out);
    auto file = gguf::GgufFile::open(model);
    REQUIRE(file.ok());
    auto ours = engine::Tokenizer::from_gguf(*file);
    REQUIRE(ours.ok());
    REQUIRE(ours->bpe() != nullptr);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      CAPTURE(texts[i]);
      const auto encoded = ours->encode(texts[i], false, false);
      CHECK(j["tokens"][i].get<std::vector<int>>() == encoded);
      std::string decoded;
      for (int t : encoded) decoded += ours->decode(-1, t);
      CHECK(decoded == texts[i]);
    }
    std::filesystem::remove(vocab);
    std::filesystem::remove(model);
  }
}
