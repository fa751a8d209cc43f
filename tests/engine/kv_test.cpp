// KV storage formats and strategies on synthetic data and a tiny synthetic model; needs no
// shared data. Real-model accuracy of each format lives in stories_kv_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "engine/kv/kv_pages.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model/transformer.hpp"
#include "engine_fixtures.hpp"

using namespace trilemma;
using namespace trilemma::engine;
using namespace trilemma::testing;

namespace {

std::vector<float> normal(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

KvConfig config(TensorType format, KvStrategy strategy, int capacity) {
  KvConfig c;
  c.layers = 2, c.heads = 4, c.kv_heads = 2, c.head_dim = 16, c.capacity = capacity;
  c.format = format, c.strategy = strategy, c.options.page_positions = 5;
  return c;
}

std::unique_ptr<KvCache> make(const KvConfig& c) {
  auto r = make_kv_cache(c);
  INFO((r.ok() ? "" : r.error().to_string()));
  REQUIRE(r.ok());
  return std::move(r).value();
}

// Logits of a prompt in batches of 7 (a rewrite of the last 3 positions included), then
// decode steps, with the given cache.
std::vector<float> run_model(const Model& m, ThreadPool& pool, std::unique_ptr<KvCache> cache) {
  Transformer tf(m, pool, Isa::scalar, std::move(cache), 7);
  std::vector<int> prompt;
  for (int i = 0; i < 30; ++i) prompt.push_back(1 + (i * 37) % 299);
  std::vector<float> out;
  auto first = tf.forward(prompt, 0, true);
  REQUIRE(first.ok());
  out.assign(first->begin(), first->end());
  auto again = tf.forward({prompt.data() + 27, 3}, 27, true);  // speculative-style rewrite
  REQUIRE(again.ok());
  out.insert(out.end(), again->begin(), again->end());
  for (int pos = 30; pos < 40; ++pos) {
    const int token = 5 + pos;
    auto l = tf.forward({&token, 1}, pos);
    REQUIRE(l.ok());
    out.insert(out.end(), l->begin(), l->end());
  }
  return out;
}

}  // namespace

TEST_CASE("kv::kv_format_kernels: dot and axpy on any slice equal those of the dequantized row", "[kv]") {
  const int kv_dim = 64;
  const auto x = normal(kv_dim, 11), q = normal(kv_dim, 12);
  for (const KvFormatKernels& k : kv_format_kernels()) {
    CAPTURE(info(k.type).name);
    std::vector<std::byte> row(kv_row_bytes(k.type, kv_dim));
    k.store_row(x.data(), row.data(), kv_dim);
    CHECK(row.size() == tensor_bytes(k.type, kv_dim));
    std::vector<float> deq(kv_dim);
    find_kernels(k.type)->dequantize(row.data(), deq.data(), kv_dim);
    for (auto [first, n] : {std::pair{0, 64}, {0, 8}, {8, 8}, {24, 16}, {28, 8}, {31, 2}, {40, 24}}) {
      CAPTURE(first, n);
      double want = 0, mag = 0;
      for (int i = 0; i < n; ++i) want += double(q[std::size_t(i)]) * deq[std::size_t(first + i)], mag += std::fabs(q[std::size_t(i)] * deq[std::size_t(first + i)]);
      CHECK(std::fabs(k.dot_ref(row.data(), first, n, q.data()) - want) <= 1e-5 * mag + 1e-6);
      if (k.dot_avx2 != nullptr && detect_isa() != Isa::scalar && detect_isa() != Isa::neon)
        CHECK(std::fabs(k.dot_avx2(row.data(), first, n, q.data()) - want) <= 1e-5 * mag + 1e-6);
      std::vector<float> out(std::size_t(n), 1.0f);
      k.axpy_ref(row.data(), first, n, 0.5f, out.data());
      for (int i = 0; i < n; ++i) CHECK(out[std::size_t(i)] == Approx(1.0f + 0.5f * deq[std::size_t(first + i)]).margin(1e-6));
    }
  }
}

TEST_CASE("kv::kv_format_kernels: every SIMD column matches its _ref twin, axpy bit for bit, on whole and cut blocks", "[kv]") {
  const Isa isa = detect_isa();
  if (isa != Isa::avx2 && isa != Isa::avx512vnni) return;  // the table has no other SIMD column
  const int kv_dim = 128;
  const auto x = normal(kv_dim, 21), q = normal(kv_dim, 22);
  for (const KvFormatKernels& k : kv_format_kernels()) {
    CAPTURE(info(k.type).name);
    CHECK(select_kv_dot(k, Isa::scalar) == k.dot_ref);
    CHECK(select_kv_axpy(k, Isa::scalar) == k.axpy_ref);
    std::vector<std::byte> row(kv_row_bytes(k.type, kv_dim));
    k.store_row(x.data(), row.data(), kv_dim);
    // Whole blocks (heads of 32, 64, 128), blocks cut at either end (heads of 8, 16), odd tails.
    for (auto [first, n] : {std::pair{0, 128}, {0, 64}, {64, 64}, {32, 32}, {0, 8}, {8, 8}, {24, 16}, {28, 40}, {31, 2},
                            {40, 24}, {16, 97}, {1, 127}}) {
      CAPTURE(first, n);
      if (k.dot_avx2 != nullptr) {
        CHECK(select_kv_dot(k, isa) == k.dot_avx2);
        double mag = 0;
        std::vector<float> deq(kv_dim);
        find_kernels(k.type)->dequantize(row.data(), deq.data(), kv_dim);
        for (int i = 0; i < n; ++i) mag += std::fabs(q[std::size_t(i)] * deq[std::size_t(first + i)]);
        const float ref = k.dot_ref(row.data(), first, n, q.data()), simd = k.dot_avx2(row.data(), first, n, q.data());
        CAPTURE(ref, simd);
        CHECK(std::fabs(simd - ref) <= 1e-5 * mag + 1e-6);
      }
      if (k.axpy_avx2 != nullptr) {
        CHECK(select_kv_axpy(k, isa) == k.axpy_avx2);
        std::vector<float> want(q.begin(), q.begin() + n), got = want;
        k.axpy_ref(row.data(), first, n, 0.37f, want.data());
        k.axpy_avx2(row.data(), first, n, 0.37f, got.data());
        CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("kv::kv_format_kernels: run kernels equal their row kernels; a position's score does not depend on its run", "[kv]") {
  const Isa isa = detect_isa();
  const bool x86 = isa == Isa::avx2 || isa == Isa::avx512vnni;
  const int kv_dim = 128, rows = 21;
  const auto q = normal(kv_dim, 31), w = normal(rows, 32);
  for (const KvFormatKernels& k : kv_format_kernels()) {
    CAPTURE(info(k.type).name);
    CHECK(select_kv_scores(k, Isa::scalar) == k.scores_ref);
    CHECK(select_kv_mix(k, Isa::scalar) == k.mix_ref);
    const std::size_t row_bytes = kv_row_bytes(k.type, kv_dim);
    std::vector<std::byte> store(row_bytes * rows);
    for (int r = 0; r < rows; ++r) k.store_row(normal(kv_dim, 100 + std::uint32_t(r)).data(), store.data() + std::size_t(r) * row_bytes, kv_dim);
    const auto row = [&](int r) { return store.data() + std::size_t(r) * row_bytes; };
    for (auto [first, n] : {std::pair{0, 128}, {64, 64}, {32, 32}, {8, 8}, {24, 16}, {16, 40}, {1, 7}, {0, 112}, {16, 80}}) {
      for (int count : {0, 1, 7, 8, 13, 21}) {
        CAPTURE(first, n, count);
        // _ref: exactly the row kernels, row by row.
        std::vector<float> got(static_cast<std::size_t>(rows)), out(std::size_t(n), 0.25f), want_out = out;
        k.scores_ref(store.data(), row_bytes, count, first, n, q.data(), 3.0f, got.data());
        for (int r = 0; r < count; ++r) CHECK(got[std::size_t(r)] == k.dot_ref(row(r), first, n, q.data()) / 3.0f);
        k.mix_ref(store.data(), row_bytes, count, first, n, w.data(), out.data());
        for (int r = 0; r < count; ++r) k.axpy_ref(row(r), first, n, w[std::size_t(r)], want_out.data());
        CHECK(std::memcmp(out.data(), want_out.data(), out.size() * sizeof(float)) == 0);
        if (!x86 || k.scores_avx2 == nullptr) continue;
        CHECK(select_kv_scores(k, Isa::avx2) == k.scores_avx2);
        CHECK(select_kv_mix(k, Isa::avx2) == k.mix_avx2);
        CHECK(select_kv_scores(k, Isa::avx512vnni) == (k.scores_avx512 != nullptr ? k.scores_avx512 : k.scores_avx2));
        CHECK(select_kv_mix(k, Isa::avx512vnni) == (k.mix_avx512 != nullptr ? k.mix_avx512 : k.mix_avx2));
        std::vector<std::pair<KvScoresFn, KvMixFn>> columns{{k.scores_avx2, k.mix_avx2}};
        if (isa == Isa::avx512vnni && k.scores_avx512 != nullptr) columns.emplace_back(k.scores_avx512, k.mix_avx512);
        for (const auto& [scores, mix] : columns) {
          CAPTURE(scores == k.scores_avx512 ? "avx512" : "avx2");
          // SIMD scores: within float rounding of _ref, and the same bits whether a position is
          // scored in a run of `count` or alone (batch invariance of attention).
          std::vector<float> simd(static_cast<std::size_t>(rows)), alone(1);
          scores(store.data(), row_bytes, count, first, n, q.data(), 3.0f, simd.data());
          for (int r = 0; r < count; ++r) {
            CAPTURE(r);
            double mag = 0;
            std::vector<float> deq(kv_dim);
            find_kernels(k.type)->dequantize(row(r), deq.data(), kv_dim);
            for (int i = 0; i < n; ++i) mag += std::fabs(q[std::size_t(i)] * deq[std::size_t(first + i)]);
            CHECK(std::fabs(simd[std::size_t(r)] - got[std::size_t(r)]) <= (1e-5 * mag + 1e-6) / 3.0);
            scores(row(r), row_bytes, 1, first, n, q.data(), 3.0f, alone.data());
            CHECK(std::memcmp(&alone[0], &simd[std::size_t(r)], sizeof(float)) == 0);
          }
          // SIMD mix: bit for bit.
          std::vector<float> simd_out(std::size_t(n), 0.25f);
          mix(store.data(), row_bytes, count, first, n, w.data(), simd_out.data());
          CHECK(std::memcmp(simd_out.data(), want_out.data(), out.size() * sizeof(float)) == 0);
        }
      }
    }
  }
}

TEST_CASE("kv::kv_format_kernels: the several-heads scores and mix equal the one-head kernels head by head, bit for bit", "[kv]") {
  if (detect_isa() != Isa::avx512vnni) {
    WARN("skipped: no AVX-512 on this CPU (" << isa_name(detect_isa()) << "), so the several-heads mix cannot run");
    return;
  }
  int checked = 0;
  for (const KvFormatKernels& k : kv_format_kernels()) {
    CHECK(select_kv_mix_heads(k, Isa::avx2) == nullptr);
    CHECK(select_kv_scores_heads(k, Isa::avx2) == nullptr);
    CHECK((k.mix_heads_avx512 == nullptr) == (k.scores_heads_avx512 == nullptr));
    if (k.mix_heads_avx512 == nullptr) continue;
    CAPTURE(info(k.type).name);
    CHECK(select_kv_mix_heads(k, Isa::avx512vnni) == k.mix_heads_avx512);
    CHECK(select_kv_scores_heads(k, Isa::avx512vnni) == k.scores_heads_avx512);
    const int kv_dim = 256, rows = 37;
    const std::size_t row_bytes = kv_row_bytes(k.type, kv_dim), w_stride = 41, out_stride = 200;
    std::vector<std::byte> store(row_bytes * rows);
    for (int r = 0; r < rows; ++r) k.store_row(normal(kv_dim, 700 + std::uint32_t(r)).data(), store.data() + std::size_t(r) * row_bytes, kv_dim);
    const auto w = normal(8 * w_stride, 77);
    const std::size_t q_stride = 131;  // queries of up to 128 elements, not 64-byte aligned
    const auto q = normal(8 * q_stride, 78);
    // 64-column blocks, a 16-column tail, a width that is not a multiple of 16 (the AVX2 path),
    // and head counts past one group of four (mix) and odd (scores: pairs and one alone).
    for (auto [first, n] : {std::pair{0, 64}, {64, 128}, {128, 80}, {192, 48}, {32, 40}}) {
      for (int heads : {1, 3, 4, 6}) {
        for (int count : {0, 1, 9, 37}) {
          CAPTURE(first, n, heads, count);
          const auto start = normal(8 * out_stride, 99);
          std::vector<float> want(start), got(start);
          for (int h = 0; h < heads; ++h)
            k.mix_avx512(store.data(), row_bytes, count, first, n, w.data() + std::size_t(h) * w_stride, want.data() + std::size_t(h) * out_stride);
          k.mix_heads_avx512(store.data(), row_bytes, count, first, n, w.data(), w_stride, heads, got.data(), out_stride);
          CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
          // scores: the scores at out's layout.
          std::vector<float> want_s(start), got_s(start);
          for (int h = 0; h < heads; ++h)
            k.scores_avx512(store.data(), row_bytes, count, first, n, q.data() + std::size_t(h) * q_stride, 2.5f,
                            want_s.data() + std::size_t(h) * out_stride);
          k.scores_heads_avx512(store.data(), row_bytes, count, first, n, q.data(), q_stride, heads, 2.5f, got_s.data(), out_stride);
          CHECK(std::memcmp(want_s.data(), got_s.data(), want_s.size() * sizeof(float)) == 0);
        }
      }
    }
    ++checked;
  }
  CHECK(checked == 2);  // f32, f16
}

TEST_CASE("kv::make_kv_cache: invalid combinations are errors naming the option", "[kv]") {
  auto c = config(TensorType::bf16, KvStrategy::contiguous, 16);
  auto r = make_kv_cache(c);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().where == "kv_format");
  CHECK(r.error().message == "bf16 is not a KV storage format (f32, f16, q8_0, q4_0)");
  c = config(TensorType::q4_0, KvStrategy::contiguous, 16);
  c.kv_heads = 1, c.heads = 2, c.head_dim = 8;  // kv_dim 8
  r = make_kv_cache(c);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "q4_0 stores blocks of 32 along kv_dim, which is 8 for this model");
  c = config(TensorType::f16, KvStrategy::paged, 16);
  c.options.sliding.window = 8;
  r = make_kv_cache(c);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "window and sinks apply to the sliding strategy only, not paged");
  c = config(TensorType::f16, KvStrategy::sliding, 16);
  r = make_kv_cache(c);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().where == "window");
  c = config(TensorType::f16, KvStrategy::contiguous, 16);
  c.options.offload.resident_bytes = 1024;
  r = make_kv_cache(c);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "a resident budget applies to the offload strategy only, not contiguous");
  c = config(TensorType::f16, KvStrategy::paged, 16);
  c.options.page_positions = 0;
  CHECK(make_kv_cache(c).error().where == "page_size");
  c = config(TensorType::f16, KvStrategy::offload, 16);
  c.options.offload.spill_dir = "/nonexistent/dir";
  r = make_kv_cache(c);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == ErrorKind::io);
}

TEST_CASE("kv strategies: paged, sliding with W >= context and offload at any budget give contiguous's logits bit for bit", "[kv]") {
  ThreadPool pool(2);
  auto m = make_synthetic(tiny_shape(), "tiny", std::nullopt, 7, pool);
  REQUIRE(m.ok());
  const std::uint64_t page_bytes = 2 * 5 * kv_row_bytes(TensorType::f32, 32);
  for (const KvFormatKernels& k : kv_format_kernels()) {
    CAPTURE(info(k.type).name);
    const auto want = run_model(*m, pool, make(config(k.type, KvStrategy::contiguous, 40)));
    std::vector<KvConfig> others;
    others.push_back(config(k.type, KvStrategy::paged, 40));
    auto sliding = config(k.type, KvStrategy::sliding, 40);
    sliding.options.sliding.window = 40, sliding.max_rewrite = 7;
    others.push_back(sliding);
    sliding.options.sliding.window = 36, sliding.options.sliding.sinks = 4;  // sinks + window cover every position too
    others.push_back(sliding);
    for (std::uint64_t pages : {0, 1, 3, 100}) {
      auto off = config(k.type, KvStrategy::offload, 40);
      off.options.offload.resident_bytes = pages * page_bytes * kv_row_bytes(k.type, 32) / kv_row_bytes(TensorType::f32, 32);
      others.push_back(off);
    }
    for (const KvConfig& c : others) {
      CAPTURE(info(c.strategy).name, c.options.sliding.window, c.options.sliding.sinks, c.options.offload.resident_bytes);
      const auto got = run_model(*m, pool, make(c));
      REQUIRE(got.size() == want.size());
      CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("kv::softmax: the SIMD column agrees with run.c's loop to a few ulp, tails and underflow included", "[kv]") {
  const SoftmaxFn simd = select_softmax(detect_isa());
  if (simd == softmax_ref) {
    WARN("SKIPPED: this CPU has no SIMD softmax column; only the reference runs");
    return;
  }
  std::mt19937 rng(5);
  for (const float spread : {0.1f, 5.0f, 60.0f, 400.0f})  // 400: most weights underflow to 0
    for (int n = 1; n <= 41; n += (n < 20 ? 1 : 7)) {
      std::uniform_real_distribution<float> d(-spread, spread);
      std::vector<float> want(std::size_t(n) + 3);
      for (float& x : want) x = d(rng);
      std::vector<float> got = want;
      softmax_ref(want.data(), n);
      simd(got.data(), n);
      double total = 0;
      for (int t = 0; t < n; ++t) {
        CAPTURE(spread, n, t, want[std::size_t(t)], got[std::size_t(t)]);
        CHECK(std::fabs(got[std::size_t(t)] - want[std::size_t(t)]) <= 4e-7f * want[std::size_t(t)] + 1e-37f);
        total += got[std::size_t(t)];
      }
      CHECK(std::fabs(total - 1.0) < 1e-5);
      for (std::size_t t = std::size_t(n); t < got.size(); ++t) CHECK(got[t] == want[t]);  // past n: untouched
    }
  float one = 3.0f;
  simd(&one, 1);
  CHECK(one == 1.0f);
}

TEST_CASE("kv::attend: heads attended together give each head's one-head result bit for bit, in every format and strategy", "[kv]") {
  const int heads = 8, kv_heads = 2, hd = 16, kv_dim = kv_heads * hd, positions = 30;
  const auto k = normal(std::size_t(positions) * kv_dim, 21), v = normal(std::size_t(positions) * kv_dim, 22);
  const auto q = normal(std::size_t(heads) * hd, 23);
  for (const KvFormatKernels& f : kv_format_kernels())
    for (const Isa isa : {Isa::scalar, detect_isa()}) {
      std::vector<KvConfig> configs;
      for (const KvStrategy s : {KvStrategy::contiguous, KvStrategy::paged, KvStrategy::sliding, KvStrategy::offload}) {
        KvConfig c = config(f.type, s, positions);
        c.heads = heads, c.kv_heads = kv_heads, c.isa = isa;
        if (s == KvStrategy::sliding) c.options.sliding.window = 9, c.options.sliding.sinks = 2, c.max_rewrite = 1;  // wraps the ring
        if (s == KvStrategy::offload) c.options.offload.resident_bytes = 2 * 5 * kv_row_bytes(f.type, kv_dim);  // one page
        configs.push_back(c);
      }
      for (const KvConfig& c : configs) {
        CAPTURE(info(f.type).name, isa_name(isa), info(c.strategy).name);
        const auto cache = make(c);
        AttendScratch scratch = cache->make_scratch();
        std::vector<float> together(std::size_t(heads) * hd), alone(std::size_t(heads) * hd);
        for (int pos = 0; pos < positions; ++pos) {
          cache->store(0, pos, &k[std::size_t(pos) * kv_dim], &v[std::size_t(pos) * kv_dim]);
          cache->prepare_attend(0, pos + 1);
          for (int h = 0; h < heads; ++h) cache->attend(0, h, 1, pos + 1, &q[std::size_t(h) * hd], &alone[std::size_t(h) * hd], scratch);
          for (const int per_call : {4, 2}) {  // whole groups, then halves
            std::fill(together.begin(), together.end(), -1.0f);
            for (int h = 0; h < heads; h += per_call)
              cache->attend(0, h, per_call, pos + 1, &q[std::size_t(h) * hd], &together[std::size_t(h) * hd], scratch);
            CAPTURE(pos, per_call);
            CHECK(std::memcmp(together.data(), alone.data(), together.size() * sizeof(float)) == 0);
          }
        }
      }
    }
}

TEST_CASE("kv::sliding: a query sees the sinks and the last W positions, across ring wraps", "[kv]") {
  const int kv_dim = 32, positions = 50, window = 8, sinks = 2;
  auto c = config(TensorType::f32, KvStrategy::sliding, positions);
  c.options.sliding.window = window, c.options.sliding.sinks = sinks, c.max_rewrite = 3;
  auto cache = make(c);
  const auto k = normal(std::size_t(positions) * kv_dim, 1), v = normal(std::size_t(positions) * kv_dim, 2);
  const auto q = normal(16, 3);
  std::vector<float> out(16), want(16);
  AttendScratch scratch = cache->make_scratch();
  const std::size_t reserved_runs = scratch.runs.capacity();  // attend must not outgrow it
  for (int pos = 0; pos < positions; ++pos) {
    cache->store(1, pos, &k[std::size_t(pos) * kv_dim], &v[std::size_t(pos) * kv_dim]);
    cache->prepare_attend(1, pos + 1);
    cache->attend(1, 3, 1, pos + 1, q.data(), out.data(), scratch);  // head 3 reads kv head 1
    std::vector<int> seen;
    for (int t = 0; t <= pos; ++t)
      if (t < sinks || t > pos - window) seen.push_back(t);
    std::vector<double> s;
    double max = -1e30, sum = 0;
    for (int t : seen) {
      double d = 0;
      for (int i = 0; i < 16; ++i) d += double(q[std::size_t(i)]) * k[std::size_t(t) * kv_dim + 16 + std::size_t(i)];
      s.push_back(d / 4.0);
      max = std::max(max, s.back());
    }
    for (double& x : s) sum += x = std::exp(x - max);
    std::fill(want.begin(), want.end(), 0.0f);
    for (std::size_t j = 0; j < seen.size(); ++j)
      for (int i = 0; i < 16; ++i) want[std::size_t(i)] += float(s[j] / sum) * v[std::size_t(seen[j]) * kv_dim + 16 + std::size_t(i)];
    CAPTURE(pos);
    for (int i = 0; i < 16; ++i) REQUIRE(out[std::size_t(i)] == Approx(want[std::size_t(i)]).margin(1e-5));
  }
  CHECK(scratch.runs.capacity() == reserved_runs);  // no allocation inside attend (worker threads)
  // Memory: the sink page and ceil((W + max_rewrite) / P) = 3 ring pages per layer, whatever the length.
  const std::uint64_t page = 2 * 5 * kv_row_bytes(TensorType::f32, kv_dim);
  CHECK(cache->stats().allocated_bytes == 4 * page);  // layer 1 only was stored
  CHECK(cache->stats().used_bytes == std::uint64_t(sinks + window) * 2 * 2 * kv_row_bytes(TensorType::f32, kv_dim));
}

TEST_CASE("kv::paged and offload: pages on demand, freed on reset; offload keeps the budget and counts tier traffic", "[kv]") {
  const std::uint64_t row = kv_row_bytes(TensorType::q8_0, 32), page = 2 * 5 * row;
  const auto x = normal(32, 5);
  auto paged = make(config(TensorType::q8_0, KvStrategy::paged, 40));
  CHECK(paged->bytes() == 0);
  for (int pos = 0; pos < 7; ++pos)
    for (int l = 0; l < 2; ++l) paged->store(l, pos, x.data(), x.data());
  CHECK(paged->stats().allocated_bytes == 2 * 2 * page);  // 2 pages (positions 0-4, 5-9) x 2 layers
  CHECK(paged->stats().used_bytes == 7 * 2 * 2 * row);
  paged->reset();
  CHECK(paged->stats().allocated_bytes == 0);
  CHECK(paged->stats().used_bytes == 0);

  auto c = config(TensorType::q8_0, KvStrategy::offload, 40);
  c.options.offload.resident_bytes = 3 * page;
  auto off = make(c);
  for (int pos = 0; pos < 40; ++pos)
    for (int l = 0; l < 2; ++l) off->store(l, pos, x.data(), x.data());
  KvStats s = off->stats();
  CHECK(s.allocated_bytes == 3 * page);
  CHECK(s.spilled_bytes == (16 - 3) * page);  // 8 pages x 2 layers, 3 resident
  CHECK(s.slow_write_bytes == (16 - 3) * page);
  std::vector<float> out(16);
  AttendScratch scratch = off->make_scratch();
  off->prepare_attend(0, 40);
  off->attend(0, 0, 1, 40, x.data(), out.data(), scratch);
  s = off->stats();
  CHECK(s.slow_read_bytes == 7 * page);  // the newest 3 pages stay resident: layer 1's page 6, both layers' page 7
  CHECK(off->status().ok());
  off->reset();
  CHECK(off->stats().allocated_bytes == 0);
  CHECK(off->stats().spilled_bytes == 0);
}
