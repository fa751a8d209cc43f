// Loaders fed bad files built in code, the tokenizer, and forward-pass equivalences on
// synthetic models; needs no shared data.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "engine/engine.hpp"
#include "engine/gguf/gguf_file.hpp"
#include "engine/kv/kv_pages.hpp"
#include "engine/quant/activation.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model/prepare.hpp"
#include "engine/model/transformer.hpp"
#include "engine/source/model_source.hpp"
#include "engine/runtime/memory_stats.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "engine_fixtures.hpp"
#include "run_binary.hpp"

using namespace trilemma;
using namespace trilemma::engine;
using namespace trilemma::testing;
namespace fs = std::filesystem;

TEST_CASE("engine::load_gguf_model: unknown tensor types and wrong dims are refused by name", "[engine]") {
  ExportOptions o;
  o.synthetic_shape = tiny_shape();
  o.weights = TensorType::f16;
  o.output = temp_path("patch.gguf");
  REQUIRE(export_gguf(o).ok());
  auto file = gguf::GgufFile::open(o.output);
  REQUIRE(file.ok());
  std::vector<std::byte> bytes(file->bytes().begin(), file->bytes().end());
  fs::remove(o.output);
  // Patch blk.1.attn_k.weight's type id (after name, n_dims, 2 dims) to an unknown one.
  const std::string name = "blk.1.attn_k.weight";
  const auto it = std::search(bytes.begin(), bytes.end(), reinterpret_cast<const std::byte*>(name.data()),
                              reinterpret_cast<const std::byte*>(name.data() + name.size()));
  REQUIRE(it != bytes.end());
  const std::size_t type_at = std::size_t(it - bytes.begin()) + name.size() + 4 + 16;
  std::vector<std::byte> unknown = bytes;
  const std::uint32_t bad = 4000;
  std::memcpy(&unknown[type_at], &bad, 4);
  auto patched = gguf::GgufFile::parse(unknown, "patched.gguf");
  REQUIRE(patched.ok());  // the header reader lists it
  ThreadPool pool(1);
  auto m = load_gguf_model(*patched, std::nullopt, pool);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().where == name);
  CHECK(m.error().message == "unknown tensor type id 4000");
  // A kv-head count that disagrees with the tensors.
  std::vector<std::byte> wrong = bytes;
  const std::string key = "llama.attention.head_count_kv";
  const auto k = std::search(wrong.begin(), wrong.end(), reinterpret_cast<const std::byte*>(key.data()),
                             reinterpret_cast<const std::byte*>(key.data() + key.size()));
  const std::uint32_t four = 4;
  std::memcpy(&wrong[std::size_t(k - wrong.begin()) + key.size() + 4], &four, 4);
  auto m2 = load_gguf_model(*gguf::GgufFile::parse(wrong, "wrong.gguf"), std::nullopt, pool);
  REQUIRE_FALSE(m2.ok());
  CHECK(m2.error().where == "blk.0.attn_k.weight");
}

TEST_CASE("engine::load_llama2c: truncated and hostile checkpoints are errors", "[engine]") {
  ThreadPool pool(1);
  const fs::path path = temp_path("ckpt.bin");
  std::vector<std::byte> b;
  for (std::int32_t v : {64, 172, 5, 8, 4, 512, 512}) put(b, v);
  b.resize(b.size() + 1000);  // far too few weights
  write_file(path, b);
  auto r = load_llama2c(path, std::nullopt, pool);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("weights: header needs") == 0);
  std::vector<std::byte> neg;
  for (std::int32_t v : {64, -172, 5, 8, 4, 512, 512}) put(neg, v);
  write_file(path, neg);
  r = load_llama2c(path, std::nullopt, pool);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "header.hidden_dim: must be > 0, got -172");
  std::vector<std::byte> huge;
  for (std::int32_t v : {1 << 30, 1 << 30, 1 << 30, 1, 1, 1 << 30, 1}) put(huge, v);
  write_file(path, huge);
  r = load_llama2c(path, std::nullopt, pool);
  REQUIRE_FALSE(r.ok());
  write_file(path, std::vector<std::byte>(10));
  CHECK_FALSE(load_llama2c(path, std::nullopt, pool).ok());
  fs::remove(path);
}

TEST_CASE("engine::Tokenizer: truncated tokenizer files are errors; every prefix is safe", "[engine]") {
  const fs::path path = temp_path("tok_trunc.bin");
  const auto full = tokenizer_bin(20);
  write_file(path, full);
  REQUIRE(Tokenizer::load_llama2c(path).ok());
  for (std::size_t n = 1; n < full.size(); ++n) {
    write_file(path, std::vector<std::byte>(full.begin(), full.begin() + std::ptrdiff_t(n)));
    auto t = Tokenizer::load_llama2c(path);
    // A prefix that ends exactly between entries is a valid, smaller vocabulary.
    if (t.ok()) CHECK(t->vocab_size() < 20);
  }
  fs::remove(path);
}

TEST_CASE("engine::Tokenizer: byte fallback and merges", "[engine]") {
  const Tokenizer t = Tokenizer::from_pieces({"<unk>", "<s>", "</s>", " ", "a", "b", "ab", " ab", "<0xC3>", "<0xA9>"},
                                             {0, 0, 0, 0, 0, 0, 1, 2, 0, 0}, {}, 1, 2);
  CHECK(t.encode("ab", true, false) == std::vector<int>{1, 7});
  CHECK(t.encode("é", false, true) == std::vector<int>{3, 8, 9, 2});
  CHECK(t.decode(1, 7) == "ab");
  CHECK(t.decode(7, 8) == "\xC3");
  CHECK(t.encode("", true, false) == std::vector<int>{1});
}

namespace {

// run.c's merge loop as written there (rescan every pair after each merge): the reference the
// heap-based merge is checked against.
std::vector<int> reference_encode(const std::vector<std::string>& pieces, const std::vector<float>& scores, const std::string& text) {
  auto id_of = [&](const std::string& p) {
    for (std::size_t i = 0; i < pieces.size(); ++i)
      if (pieces[i] == p) return int(i);
    return -1;
  };
  std::vector<int> tokens;
  if (!text.empty()) tokens.push_back(id_of(" "));
  for (char c : text) tokens.push_back(id_of(std::string(1, c)));
  for (;;) {
    float best = -1e10f;
    int best_id = -1;
    std::size_t at = 0;
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
      const int id = id_of(pieces[std::size_t(tokens[i])] + pieces[std::size_t(tokens[i + 1])]);
      if (id >= 0 && scores[std::size_t(id)] > best) best = scores[std::size_t(id)], best_id = id, at = i;
    }
    if (best_id < 0) return tokens;
    tokens[at] = best_id;
    tokens.erase(tokens.begin() + std::ptrdiff_t(at) + 1);
  }
}

}  // namespace

TEST_CASE("engine::Tokenizer: the heap merge equals run.c's rescanning loop, ties included", "[engine]") {
  // Letters a-c, every pair and some triples, with repeated scores so ties are common.
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>", " ", "a", "b", "c"};
  for (const char* p : {"ab", "ba", "aa", "bc", "cb", "cc", " a", " b", "aab", "abc", "bab", "cca", " ab", "abab", "cc c"})
    pieces.push_back(p);
  std::vector<float> scores(pieces.size(), 0.0f);
  for (std::size_t i = 7; i < pieces.size(); ++i) scores[i] = float((i * 7) % 5);  // 0..4, many equal
  const Tokenizer t = Tokenizer::from_pieces(pieces, scores, {}, 1, 2);
  std::uint64_t state = 12345;
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    const int len = int(state % 40);
    for (int i = 0; i < len; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      text += "abc"[(state >> 33) % 3];
    }
    CAPTURE(text);
    CHECK(t.encode(text, false, false) == reference_encode(pieces, scores, text));
  }
}

TEST_CASE("engine::Transformer: NeoX RoPE on half-split weights equals adjacent RoPE", "[engine]") {
  // Rotating pairs (i, i + d/2) of a head whose q/k rows were permuted from the adjacent
  // order (2i, 2i+1) gives the same q.k products, so the logits must agree.
  ThreadPool pool(1);
  auto adjacent = make_synthetic(tiny_shape(), "adjacent", std::nullopt, 5, pool);
  auto neox = make_synthetic(tiny_shape(), "neox", std::nullopt, 5, pool);
  REQUIRE(adjacent.ok());
  REQUIRE(neox.ok());
  neox->shape.rope_layout = RopeLayout::neox;
  const int hd = int(neox->shape.head_dim);
  const auto permute = [&](const Matrix& src) {
    auto* dst = reinterpret_cast<float*>(neox->storage->allocate(src.bytes()));
    const auto* in = reinterpret_cast<const float*>(src.data);
    for (std::int64_t r = 0; r < src.rows; ++r) {
      const std::int64_t head = r / hd, i = r % hd;
      // adjacent row 2j -> neox row j, adjacent row 2j+1 -> neox row j + hd/2
      const std::int64_t to = head * hd + (i % 2 == 0 ? i / 2 : i / 2 + hd / 2);
      std::memcpy(dst + to * src.cols, in + r * src.cols, std::size_t(src.cols) * 4);
    }
    return Matrix{src.type, src.rows, src.cols, reinterpret_cast<const std::byte*>(dst)};
  };
  for (auto& l : neox->layers) l.wq = permute(l.wq), l.wk = permute(l.wk);
  const std::vector<int> tokens = {1, 50, 60, 70, 80, 90, 100};
  const auto& s = adjacent->shape;
  Transformer a(*adjacent, pool, Isa::scalar, make_contiguous_f32(2, 16, 4, 2, 16));
  Transformer b(*neox, pool, Isa::scalar, make_contiguous_f32(2, 16, 4, 2, 16));
  auto la = a.forward(tokens, 0, true);
  REQUIRE(la.ok());
  const std::vector<float> logits(la->begin(), la->end());
  auto lb = b.forward(tokens, 0, true);
  REQUIRE(lb.ok());
  REQUIRE(lb->size() == tokens.size() * s.vocab);
  for (std::size_t i = 0; i < logits.size(); ++i) REQUIRE((*lb)[i] == Approx(logits[i]).margin(1e-4));
  // And the layouts really differ: neox rotation of the unpermuted weights changes the logits.
  neox->layers = adjacent->layers;
  Transformer c(*neox, pool, Isa::scalar, make_contiguous_f32(2, 16, 4, 2, 16));
  auto lc = c.forward(tokens, 0, true);
  REQUIRE(lc.ok());
  double diff = 0;
  for (std::size_t i = 0; i < logits.size(); ++i) diff = std::max(diff, double(std::fabs((*lc)[i] - logits[i])));
  CHECK(diff > 1e-3);
}

TEST_CASE("engine::swiglu: the SIMD column agrees with run.c's SiLU loop to a few ulp, tails and extremes included", "[engine]") {
  const SwigluFn simd = select_swiglu(detect_isa());
  if (simd == swiglu_ref) {
    WARN("SKIPPED: this CPU has no SIMD SwiGLU column; only the reference runs");
    return;
  }
  std::vector<float> x, up;
  for (int i = -4000; i <= 4000; ++i) x.push_back(float(i) * 0.03f), up.push_back(1.0f + float(i % 7) * 0.25f);  // -120..120
  for (const float big : {-1e4f, -100.0f, 88.0f, 90.0f, 1e4f}) x.push_back(big), up.push_back(0.5f);
  for (const std::size_t n : {x.size(), std::size_t(13), std::size_t(8), std::size_t(1)}) {
    std::vector<float> want(x.begin(), x.end()), got(x.begin(), x.end());
    swiglu_ref(want.data(), up.data(), n);
    simd(got.data(), up.data(), n);
    for (std::size_t i = 0; i < x.size(); ++i) {
      CAPTURE(n, i, x[i], want[i], got[i]);
      CHECK(std::fabs(got[i] - want[i]) <= 1e-6f * std::fabs(want[i]) + 1e-30f);
    }
  }
}

TEST_CASE("engine::pack_for_isa: x4 tiles and x16 strips give the logits of the ggml-layout kernels", "[engine]") {
  ModelShape s = tiny_shape();
  s.hidden = 128, s.heads = 4, s.kv_heads = 2, s.head_dim = 32, s.ffn = 256, s.vocab = 300;
  s.tied_embeddings = true;  // the classifier is packed as a copy, the rest in place
  const Isa best = detect_isa();
  for (TensorType t : {TensorType::q8_0, TensorType::q4_0}) {
    CAPTURE(info(t).name, isa_name(best));
    ThreadPool pool(2);
    auto plain = make_synthetic(s, "plain", t, 11, pool);
    auto packed = make_synthetic(s, "packed", t, 11, pool);
    REQUIRE(plain.ok());
    REQUIRE(packed.ok());
    pack_for_isa(*packed, best, pool);
    const bool has_tile = select_tile(*find_kernels(t), best) != nullptr;
    const bool has_strip = select_strip(*find_kernels(t), best) != nullptr;
    const WeightLayout tiled = has_tile ? WeightLayout::x4 : WeightLayout::ggml;
    // w2 has 128 rows (whole strips: x16 where the format has strips); the classifier's 300 do
    // not fill strips and take the x4 tile.
    CHECK(packed->layers[0].w2.layout == (has_strip ? WeightLayout::x16 : tiled));
    CHECK(packed->classifier.layout == tiled);
    CHECK(packed->token_embedding.layout == WeightLayout::ggml);  // row lookups read ggml layout
    std::vector<int> tokens = {1, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49};  // > 8: two tiles
    Transformer a(*plain, pool, Isa::scalar, make_contiguous_f32(2, 16, 4, 2, 32));
    Transformer b(*packed, pool, best, make_contiguous_f32(2, 16, 4, 2, 32));
    auto la = a.forward(tokens, 0, true);
    REQUIRE(la.ok());
    const std::vector<float> ref(la->begin(), la->end());
    auto lb = b.forward(tokens, 0, true);
    REQUIRE(lb.ok());
    for (std::size_t i = 0; i < ref.size(); ++i) REQUIRE((*lb)[i] == Approx(ref[i]).margin(2e-3).epsilon(1e-3));
    auto one = b.forward({&tokens[3], 1}, 3);  // decode path (one token) over the same cache
    REQUIRE(one.ok());
    for (std::size_t v = 0; v < s.vocab; ++v) REQUIRE((*one)[v] == Approx(ref[3 * s.vocab + v]).margin(2e-3).epsilon(1e-3));
    if (has_tile) {  // a packed model refuses kernels without the tile
      Transformer c(*packed, pool, Isa::avx2, make_contiguous_f32(2, 16, 4, 2, 32));
      CHECK_FALSE(c.forward(tokens, 0).ok());
    }
  }
}

namespace {

// scalar, then every SIMD level this CPU runs (an avx512vnni machine also runs its avx2 path).
std::vector<Isa> runnable_isas() {
  std::vector<Isa> out = {Isa::scalar};
  const Isa best = detect_isa();
  if (best == Isa::avx512vnni) out.push_back(Isa::avx2);
  if (best != Isa::scalar) out.push_back(best);
  return out;
}

// Every matrix's rows are a multiple of 128, so q8_0 / q4_0 run the x4 tiles on avx512vnni
// (and the k-quants their multi-token dots, on the 512-wide rows; 640-wide ones fall back);
// rows of 4 and 5 groups of 128 take both accumulator chains and a tail group.
ModelShape x4_shape() {
  ModelShape s = tiny_shape();
  s.layers = 2, s.hidden = 512, s.heads = 8, s.kv_heads = 2, s.head_dim = 64, s.ffn = 640, s.vocab = 512;
  return s;
}

}  // namespace

TEST_CASE("engine::Transformer: batched prefill logits equal sequential decode logits bit for bit", "[engine]") {
  const ModelShape s = x4_shape();
  const std::vector<int> tokens = {1, 17, 300, 5, 99, 42, 7, 256, 511, 3, 64, 128, 200, 11, 13, 400, 2, 9, 77};  // 19: 8 + 8 + 3
  for (const Isa isa : runnable_isas()) {
    for (TensorType t : {TensorType::q8_0, TensorType::q4_0, TensorType::q4_k, TensorType::q6_k, TensorType::f16, TensorType::f32}) {
      CAPTURE(isa_name(isa), info(t).name);
      ThreadPool pool(2);
      auto m = make_synthetic(s, "x4", t, 23, pool);
      REQUIRE(m.ok());
      pack_for_isa(*m, isa, pool);
      if (isa == Isa::avx512vnni && (t == TensorType::q8_0 || t == TensorType::q4_0)) CHECK(m->layers[0].w1.repacked());
      const auto fresh = [&] {
        return std::make_unique<Transformer>(*m, pool, isa,
                                             make_contiguous_f32(int(s.layers), 32, int(s.heads), int(s.kv_heads), int(s.head_dim), isa));
      };
      auto batched = fresh();
      auto all = batched->forward(tokens, 0, true);
      REQUIRE(all.ok());
      const std::vector<float> want(all->begin(), all->end());
      // One token per call (decode), then uneven chunks (prefill + verify-like re-runs).
      for (const std::vector<int>& chunks : {std::vector<int>(tokens.size(), 1), std::vector<int>{3, 1, 9, 2, 4}}) {
        auto tf = fresh();
        int pos = 0;
        for (int c : chunks) {
          auto got = tf->forward(std::span<const int>(tokens).subspan(std::size_t(pos), std::size_t(c)), pos, true);
          REQUIRE(got.ok());
          CAPTURE(pos, c);
          REQUIRE(std::memcmp(got->data(), &want[std::size_t(pos) * s.vocab], got->size_bytes()) == 0);
          pos += c;
        }
      }
    }
  }
}

TEST_CASE("engine::Transformer: a prompt's prefill may take the tile kernels, within their tolerance of decode, and only without per-token logits", "[engine]") {
  const ModelShape s = x4_shape();
  std::vector<int> tokens;
  for (int i = 0; i < 40; ++i) tokens.push_back((i * 37 + 5) % int(s.vocab));  // 40 tokens: two slabs and a short one
  const Isa isa = detect_isa();
  const bool tiles = select_rows_amx(*find_kernels(TensorType::f16), isa) != nullptr;
  if (!tiles) WARN("no AMX-BF16 f16 rows on this CPU (or TRILEMMA_AMX=0): prefill must equal decode bit for bit here");
  ThreadPool pool(2);
  auto m = make_synthetic(s, "x4", TensorType::f16, 23, pool);
  REQUIRE(m.ok());
  pack_for_isa(*m, isa, pool);
  const auto fresh = [&] {
    return std::make_unique<Transformer>(*m, pool, isa, make_contiguous_f32(int(s.layers), 64, int(s.heads), int(s.kv_heads), int(s.head_dim), isa));
  };
  auto prefill = fresh();
  auto last = prefill->forward(tokens, 0);
  REQUIRE(last.ok());
  const std::vector<float> fast(last->begin(), last->end());
  auto exact_run = fresh();
  auto all = exact_run->forward(tokens, 0, true);  // per-token logits: decode's bits
  REQUIRE(all.ok());
  const std::vector<float> exact(all->end() - std::ptrdiff_t(s.vocab), all->end());
  auto decode = fresh();
  for (std::size_t i = 0; i < tokens.size(); ++i) REQUIRE(decode->forward({&tokens[i], 1}, int(i)).ok());
  auto step = decode->forward({&tokens.back(), 1}, int(tokens.size()) - 1);  // the last token again: its logits
  REQUIRE(step.ok());
  CHECK(std::memcmp(exact.data(), step->data(), exact.size() * sizeof(float)) == 0);
  float scale = 0, worst = 0;
  for (std::size_t i = 0; i < fast.size(); ++i) scale = std::max(scale, std::fabs(exact[i])), worst = std::max(worst, std::fabs(fast[i] - exact[i]));
  CAPTURE(scale, worst);
  if (tiles) CHECK(worst <= 1e-3f * scale);  // two layers of 2^-14 products: far inside
  else CHECK(worst == 0.0f);
  CHECK(std::max_element(fast.begin(), fast.end()) - fast.begin() == std::max_element(exact.begin(), exact.end()) - exact.begin());
}

// Drops `path` from the page cache, so the next read goes through readahead as a user's file does.
void drop_from_page_cache(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  ::fsync(fd);
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// Issue 16: a GGUF's weights are resident once. Loading copies matrices out of the mapping
// (conversion to another format, or repacking into the x4 layout); the mapped pages of a copied
// matrix must not stay resident beside the copy. Measured as the growth of VmRSS over loading,
// against the bytes the engine holds (a ratio: the mapping left resident makes it about 2x).
TEST_CASE("engine::load_gguf_model: copied matrices do not keep their mapped pages resident", "[engine]") {
  ModelShape s;
  s.layers = 4, s.hidden = 512, s.heads = 8, s.kv_heads = 8, s.head_dim = 64, s.ffn = 1536, s.vocab = 2048;
  s.context = 64, s.tied_embeddings = false;
  struct Case {
    TensorType stored;
    std::optional<TensorType> run_as;
  };
  for (const Case c : {Case{TensorType::q4_0, std::nullopt}, Case{TensorType::f16, TensorType::q8_0}}) {
    CAPTURE(info(c.stored).name);
    ExportOptions o;
    o.synthetic_shape = s;
    o.weights = c.stored;
    o.output = temp_path("rss.gguf");
    REQUIRE(export_gguf(o).ok());
    // Out of the page cache, so the load reads it back as a user's file is read: through
    // readahead, into large folios where the file system has them, which the kernel maps
    // whole on a fault (a page written by export stays a small folio).
    drop_from_page_cache(o.output);
    const Isa isa = detect_isa();
    ThreadPool pool(2);
    {
      auto file = gguf::GgufFile::open(o.output);
      REQUIRE(file.ok());
#if defined(__GLIBC__)
      malloc_trim(0);  // the export's freed buffers would otherwise hide a second copy
#endif
      const std::uint64_t before = current_rss_bytes(), file_before = current_rss_file_bytes();
      auto m = load_gguf_model(*file, c.run_as, pool);
      REQUIRE(m.ok());
      pack_for_isa(*m, isa, pool);
      const bool copied = c.run_as || m->layers[0].w1.repacked();
      const double grown = double(current_rss_bytes()) - double(before);
      const double file_grown = double(current_rss_file_bytes()) - double(file_before);
      const double held = double(m->storage->allocated_bytes());
      const double mib = 1048576;
      CAPTURE(isa_name(isa), grown / mib, file_grown / mib, held / mib, copied);
      if (!copied) WARN("no matrix was copied on this CPU (no x4 tile): the check is only that nothing doubled");
      // Of the file, nothing stays resident: copied matrices gave their pages back, the rest is
      // not read yet. (RssFile alone: an emulator's own code buffers are anonymous memory.)
      CHECK(file_grown <= 0.05 * double(m->weight_bytes()) + 2 * mib);
      // Under qemu-user (scripts/test-aarch64 sets TRILEMMA_EMULATED) VmRSS is the emulator's,
      // whose allocator reuse and code buffers hide or add megabytes: RssFile only there.
      // Under AddressSanitizer VmRSS holds its shadow and the quarantine of freed blocks (the
      // export's, the copy's row buffers), megabytes that vary from run to run: RssFile only.
      const char* emulated = std::getenv("TRILEMMA_EMULATED");
      if (emulated != nullptr && *emulated != '\0' && std::string(emulated) != "0") {
        WARN("emulated (TRILEMMA_EMULATED): VmRSS checks skipped, RssFile checked; VmRSS is checked natively");
      } else if (trilemma::testing::k_address_sanitizer) {
        WARN("AddressSanitizer build: VmRSS checks skipped, RssFile checked; VmRSS is checked in the plain build");
      } else {
        CHECK(grown <= 1.15 * double(m->weight_bytes()) + 4 * mib);
        if (copied) {
          CHECK(held >= 0.9 * double(m->weight_bytes() - m->token_embedding.bytes()));
          // The breakdown `run --json` reports (no token looked up yet) is what came in.
          CHECK(grown == Approx(double(m->resident_weight_bytes(false))).epsilon(0.05).margin(4 * mib));
        }
      }
    }
    fs::remove(o.output);
  }
}

// A file whose matrices are partly copied out (Q4_K, repacked into strips where the CPU has them)
// and partly read in place (Q5_K ffn_down, a format without strips; Q6_K's in a Q4_K_M file
// before it had them): reading the in-place matrices must not map their released neighbours
// back. On Linux 6.18 the page cache's 2 MiB folios were mapped whole on a fault (46 MiB over the
// breakdown on a Q4_K_M TinyLlama) until the released ranges were advised MADV_NOHUGEPAGE
// (WeightStorage::retire_mapped).
TEST_CASE("engine::load_gguf_model: matrices read in place do not map the retired ones back", "[engine]") {
  ModelShape s;
  s.layers = 4, s.hidden = 1024, s.heads = 8, s.kv_heads = 8, s.head_dim = 128, s.ffn = 2816, s.vocab = 2048;
  s.context = 64, s.tied_embeddings = false;
  ExportOptions o;
  o.synthetic_shape = s;
  o.weights = TensorType::q4_k;
  // q5_k has no strips, so its matrices stay in place on every CPU.
  for (std::uint32_t l = 0; l < s.layers; ++l) o.weights_by_tensor["blk." + std::to_string(l) + ".ffn_down.weight"] = TensorType::q5_k;
  o.output = temp_path("rss-mixed.gguf");
  REQUIRE(export_gguf(o).ok());
  {
    // Out of the page cache, then back in 2 MiB folios, as a reader that maps it MADV_HUGEPAGE
    // (faults then read ahead whole PMD-sized folios where the file system has large folios)
    // leaves it for the next process.
    drop_from_page_cache(o.output);
    const int fd = ::open(o.output.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    const auto size = std::size_t(fs::file_size(o.output));
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    REQUIRE(map != MAP_FAILED);
    (void)::madvise(map, size, MADV_HUGEPAGE);
    volatile std::uint64_t sum = 0;
    for (std::size_t i = 0; i < size; i += 4096) sum = sum + std::uint64_t(static_cast<const unsigned char*>(map)[i]);
    ::munmap(map, size);
    ::close(fd);
  }
  const Isa isa = detect_isa();
  ThreadPool pool(2);
  {
    auto file = gguf::GgufFile::open(o.output);
    REQUIRE(file.ok());
    const std::uint64_t file_before = current_rss_file_bytes();
    auto m = load_gguf_model(*file, std::nullopt, pool);
    REQUIRE(m.ok());
    pack_for_isa(*m, isa, pool);
    double in_place = double(m->token_embedding.bytes());  // rows are looked up in place
    int in_place_matrices = 1;
    for (const auto& l : m->layers)
      for (const Matrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3})
        if (m->storage->file_backed(w->data, w->bytes())) in_place += double(w->bytes()), ++in_place_matrices;
    if (!m->layers[0].w1.repacked()) WARN("no Q4_K strips on this CPU: every matrix is read in place, nothing is released");
    Transformer tf(*m, pool, isa, make_contiguous_f32(int(s.layers), 32, int(s.heads), int(s.kv_heads), int(s.head_dim), isa));
    const std::vector<int> tokens = {1, 500, 1000, 2000};
    REQUIRE(tf.forward(tokens, 0, true).ok());
    const double file_grown = double(current_rss_file_bytes()) - double(file_before);
    const double mib = 1048576;
    CAPTURE(isa_name(isa), file_grown / mib, in_place / mib, in_place_matrices);
    // What is read in place, plus the kernel's fault-around window (64 KiB) at either end of each.
    CHECK(file_grown <= in_place + in_place_matrices * 2 * 65536.0 + 1 * mib);
  }
  fs::remove(o.output);
}

// Whether the page holding `p` is mapped into this process (/proc/self/pagemap bit 63; the
// frame number needs privileges, the bit does not). nullopt where pagemap cannot be read.
std::optional<bool> page_mapped(const void* p) {
  const int fd = ::open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) return std::nullopt;
  std::uint64_t entry = 0;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto at = off_t(reinterpret_cast<std::uintptr_t>(p) / page * sizeof(entry));
  const bool ok = ::pread(fd, &entry, sizeof(entry), at) == ssize_t(sizeof(entry));
  ::close(fd);
  if (!ok) return std::nullopt;
  return (entry >> 63) != 0;
}

// Read in place, a norm or an embedding row kept the kernel's whole mapping unit resident (up
// to a 2 MiB folio per read on ext4), which the memory breakdown did not count: norms are
// copied at load, and a looked-up row's pages are handed back after the read.
TEST_CASE("engine::load_gguf_model: norms and looked-up embedding rows do not stay mapped", "[engine]") {
  const char* emulated = std::getenv("TRILEMMA_EMULATED");
  if (emulated != nullptr && *emulated != '\0' && std::string(emulated) != "0") {
    WARN("skipped: emulated (TRILEMMA_EMULATED), where /proc/self/pagemap describes the emulator's mappings");
    return;
  }
  ModelShape s = tiny_shape();
  s.hidden = 256, s.heads = 4, s.kv_heads = 2, s.head_dim = 64, s.ffn = 512, s.vocab = 4096;
  s.tied_embeddings = false;
  ExportOptions o;
  o.synthetic_shape = s;
  o.weights = TensorType::q8_0;
  o.output = temp_path("mapped-rows.gguf");
  REQUIRE(export_gguf(o).ok());
  {
    auto file = gguf::GgufFile::open(o.output);
    REQUIRE(file.ok());
    REQUIRE(file->file_backed());
    ThreadPool pool(1);
    auto m = load_gguf_model(*file, std::nullopt, pool);
    REQUIRE(m.ok());
    const std::size_t norm_bytes = std::size_t(s.hidden) * sizeof(float);
    for (const float* norm : {m->layers[0].attn_norm, m->layers[0].ffn_norm, m->final_norm})
      CHECK(m->storage->owns(reinterpret_cast<const std::byte*>(norm), norm_bytes));
    REQUIRE(m->storage->file_backed(m->token_embedding.data, m->token_embedding.bytes()));
    const std::int64_t token = 2000;
    const std::byte* row = m->token_embedding.row(token);
    const volatile std::byte first = *row;  // faults the row's page in
    (void)first;
    const auto before = page_mapped(row);
    if (!before) {
      WARN("skipped: /proc/self/pagemap cannot be read here");
    } else {
      CHECK(*before);
      m->release_embedding_row(token);
      CHECK_FALSE(*page_mapped(row));
    }
  }
  fs::remove(o.output);
}

// Releasing pages is for file mappings only: on bytes held in memory (GgufFile::parse) it
// would zero them. Loading with a conversion and the x4 repack leaves such bytes intact.
TEST_CASE("engine::load_gguf_model: bytes held in memory are never released", "[engine]") {
  ModelShape s = tiny_shape();
  s.hidden = 128, s.heads = 4, s.kv_heads = 2, s.head_dim = 32, s.ffn = 256;  // rows of 128: x4 on AVX-512
  ExportOptions o;
  o.synthetic_shape = s;
  o.weights = TensorType::q8_0;
  o.output = temp_path("in-memory.gguf");
  REQUIRE(export_gguf(o).ok());
  std::ifstream in(o.output, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(o.output);
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  const std::vector<std::byte> original = bytes;
  auto file = gguf::GgufFile::parse(std::move(bytes), "in-memory.gguf");
  REQUIRE(file.ok());
  CHECK_FALSE(file->file_backed());
  ThreadPool pool(2);
  for (const std::optional<TensorType> run_as : {std::optional<TensorType>{}, std::optional<TensorType>{TensorType::q4_0}}) {
    auto m = load_gguf_model(*file, run_as, pool);
    REQUIRE(m.ok());
    pack_for_isa(*m, detect_isa(), pool);
    CHECK(std::memcmp(file->bytes().data(), original.data(), original.size()) == 0);
  }
}

// The smaps block of the mapping holding `p` (its header line and fields), or "" when none does.
std::string smaps_block_of(const void* p) {
  std::ifstream in("/proc/self/smaps");
  std::string line, block;
  bool inside = false;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  while (std::getline(in, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find('-') < 17) {
      if (inside) return block;
      inside = at >= lo && at < hi;
      block.clear();
    }
    if (inside) block += line + "\n";
  }
  return inside ? block : "";
}

// Decode streams every weight once per token: weight buffers of 2 MiB and more sit on 2 MiB
// pages where the kernel offers them (q4_0 decode on 4 KiB pages was a tenth slower).
TEST_CASE("engine::WeightStorage: large buffers are zeroed, owned and eligible for 2 MiB pages", "[engine]") {
  std::size_t huge = 0;
  std::ifstream("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") >> huge;
  WeightStorage storage;
  const std::size_t bytes = (std::size_t(5) << 20) + 100;
  std::byte* p = storage.allocate(bytes);
  REQUIRE(p != nullptr);
  // Mapped on its own, from a huge page boundary, where the huge page is at most 5 MiB (2 MiB
  // on x86-64 and 4 KiB-page arm64).
  const bool mapped = huge > 0 && huge <= bytes;
  if (mapped) CHECK(reinterpret_cast<std::uintptr_t>(p) % huge == 0);
  CHECK(storage.owns(p, bytes));
  CHECK_FALSE(storage.owns(p, bytes + 4096));
  CHECK(storage.allocated_bytes() >= bytes);
  CHECK(std::all_of(p, p + bytes, [](std::byte b) { return b == std::byte{0}; }));
  std::memset(p, 0x5a, bytes);  // writable to the last byte
  std::byte* small = storage.allocate(100);
  CHECK(reinterpret_cast<std::uintptr_t>(small) % 64 == 0);
  CHECK(std::all_of(small, small + 100, [](std::byte b) { return b == std::byte{0}; }));

  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(mode_file, mode);
  if (std::getenv("TRILEMMA_EMULATED") != nullptr) {
    WARN("emulated (TRILEMMA_EMULATED): /proc/self/smaps describes the emulator's mappings, eligibility not checked");
    return;
  }
  const std::string block = smaps_block_of(p);
  REQUIRE_FALSE(block.empty());
  if (!mapped || mode.empty() || mode.find("[never]") != std::string::npos || block.find("THPeligible") == std::string::npos) {
    WARN("transparent huge pages are off, larger than the buffer (" << huge << " bytes) or not reported here (" << mode
                                                                   << "): eligibility not checked");
  } else {
    int eligible = -1;
    (void)std::sscanf(block.c_str() + block.find("THPeligible:"), "THPeligible: %d", &eligible);
    CAPTURE(mode, block);
    CHECK(eligible == 1);
  }
}
