// engine_bench: decode and prefill speed of the reference engine on a synthetic TinyLlama-1.1B
// shape, against the host's memory read bandwidth measured in the same run.
//
// For each weight format (q8_0, q4_0, f16) and thread count (1, 2):
//   prefill tok/s   64-token prompt (--prompt N: N tokens) in one batched forward pass (median of runs)
//   decode tok/s    one token per forward pass after the prompt (median over tokens)
//   effective GB/s  weight bytes one decoded token streams / median decode time
//   % of read BW    effective GB/s / the host's streaming read bandwidth at that thread count
//   prefill/decode  per-token speed-up from reusing each weight row across the prompt
//   kernel % BW     the matrix-vector kernel alone (no attention, norms or thread handoffs)
//                   streaming a 512 MiB matrix of the format, as a share of read bandwidth
//                   measured in alternation with it: the gap between this column and
//                   "% read BW" is what the rest of a decode step costs
// Weights are synthetic (deterministic PRNG): right for speed and memory, meaningless output.
//
// usage: engine_bench [--small] [--runs N] [--prompt N] [--formats q8_0,q4_0,f16] [--threads 1,2]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "engine/runtime/host_measure.hpp"
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/kv/kv_pages.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model/prepare.hpp"
#include "engine/model/transformer.hpp"
#include "engine/source/model_source.hpp"
#include "engine/quant/kernel_table.hpp"
#include "engine/quant/q8_panel.hpp"
#include "engine/runtime/memory_stats.hpp"

using namespace trilemma;
using namespace trilemma::engine;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}


// Streaming read over a buffer far larger than the last-level cache, split into one
// contiguous part per thread of `pool` (the decode's own pool, so both see the same threads
// and scheduling); median GB/s of `runs` passes.
double read_bandwidth_gbps(const std::byte* buf, std::size_t bytes, ThreadPool& pool, int runs) {
  std::vector<double> gbps;
  const int threads = pool.size();
  const std::size_t part = bytes / std::size_t(threads) / 128 * 128;
  std::vector<std::uint64_t> sink(static_cast<std::size_t>(threads));
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    pool.parallel_for(threads, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) sink[std::size_t(t)] = engine::stream_read_sum(buf + std::size_t(t) * part, part);
    });
    gbps.push_back(double(part) * threads / seconds_since(t0) / 1e9);
  }
  volatile std::uint64_t keep = sink[0];
  (void)keep;
  return median(gbps);
}

// The decode's matrix-vector kernel alone: one token against a `bytes`-sized matrix of `type`
// (2048 columns, random codes) split into one contiguous part per thread, exactly as the
// decode calls it (the x4 tile where the ISA has one, else the format's dot). Returns the
// median over `runs` of kernel GB/s / read GB/s, each read pass right before its kernel pass.
double kernel_share_of_read(TensorType type, Isa isa, ThreadPool& pool, int runs) {
  const FormatKernels& k = *find_kernels(type);
  const std::int64_t cols = 2048, blocks = cols / 32;
  const std::size_t row_bytes = tensor_bytes(type, cols);
  const std::int64_t rows = std::int64_t((std::size_t(512) << 20) / row_bytes);
  const std::size_t bytes = row_bytes * std::size_t(rows);
  auto* w = static_cast<std::uint8_t*>(std::aligned_alloc(64, bytes));
  std::uint64_t state = 88172645463325252ull;
  for (std::size_t i = 0; i + 8 <= bytes; i += 8) {  // xorshift; fp16 fields masked to small normals
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    const std::uint64_t v = state & 0x3B3B3B3B3B3B3B3Bull;
    std::memcpy(w + i, &v, 8);
  }
  const TileFn tile = k.pack_x4 != nullptr ? select_tile(k, isa) : nullptr;
  std::vector<std::uint16_t> scales(tile ? std::size_t(rows * blocks) : 0, 0x3C00);
  const std::size_t code_bytes = tile ? x4_code_bytes(row_bytes, blocks) : row_bytes;
  std::vector<float> x(std::size_t(cols), 0.25f);
  std::vector<float> y(static_cast<std::size_t>(rows));
  const FormatKernels& ak = *find_kernels(k.activation);
  std::vector<std::byte> act(tensor_bytes(k.activation, std::uint64_t(cols)));
  ak.quantize(x.data(), act.data(), cols);
  Q8Panel panel;
  if (tile) pack_q8_panel(act.data(), act.size(), 1, blocks, panel);
  const DotFn dot = select_dot(k, isa);
  const int threads = pool.size();
  std::vector<double> shares;
  for (int r = 0; r < runs; ++r) {
    const double read = read_bandwidth_gbps(reinterpret_cast<const std::byte*>(w), bytes, pool, 1);
    const auto t0 = Clock::now();
    pool.parallel_for(threads, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) {
        const std::int64_t first = rows * t / threads, last = rows * (t + 1) / threads;
        if (tile) {
          tile(w + std::size_t(first) * code_bytes, code_bytes, scales.data() + std::size_t(first * blocks), std::size_t(blocks),
               int(last - first), panel, 0, 1, y.data() + first, std::size_t(rows));
        } else {
          for (std::int64_t i = first; i < last; ++i) y[std::size_t(i)] = dot(w + std::size_t(i) * row_bytes, act.data(), cols);
        }
      }
    });
    shares.push_back(double(bytes) / seconds_since(t0) / 1e9 / read);
  }
  std::free(w);
  return median(shares);
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string line;
  std::getline(in, line);
  return line + "\n";
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

ModelShape tinyllama() {
  ModelShape s;
  s.layers = 22, s.hidden = 2048, s.heads = 32, s.kv_heads = 4, s.head_dim = 64, s.ffn = 5632, s.vocab = 32000;
  s.context = 2048, s.tied_embeddings = false;
  return s;
}

ModelShape small() {  // for a quick check of the harness
  ModelShape s;
  s.layers = 4, s.hidden = 512, s.heads = 8, s.kv_heads = 4, s.head_dim = 64, s.ffn = 1408, s.vocab = 4096;
  s.context = 512, s.tied_embeddings = false;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  bool use_small = false;
  int runs = 5;
  std::vector<std::string> formats = {"q8_0", "q4_0", "f16"};
  std::vector<int> thread_counts = {1, 2};
  int prompt_len = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--small") use_small = true;
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--prompt" && i + 1 < argc) prompt_len = std::clamp(std::atoi(argv[++i]), 1, 1900);
    else if (a == "--formats" && i + 1 < argc) formats = split(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) {
      thread_counts.clear();
      for (const auto& t : split(argv[++i])) thread_counts.push_back(std::max(1, std::atoi(t.c_str())));
    } else {
      std::fprintf(stderr, "unknown argument %s\nusage: engine_bench [--small] [--runs N] [--prompt N] [--formats a,b] [--threads 1,2]\n", argv[i]);
      return 2;
    }
  }
  const ModelShape shape = use_small ? small() : tinyllama();
  const char* shape_name = use_small ? "small-test" : "TinyLlama-1.1B";
  const int decode_tokens = 32;
  const Isa isa = detect_isa();

  // The bandwidth buffer stays allocated: read bandwidth is measured right before each decode
  // measurement, at its thread count, because a shared host's bandwidth drifts within minutes.
  const std::size_t bw_bytes = std::size_t(1) << 30;
  auto* bw_buf = static_cast<std::byte*>(std::aligned_alloc(64, bw_bytes));
  std::memset(bw_buf, 1, bw_bytes);
  const double bw_gib = double(bw_bytes) / (1u << 30);
  std::printf("engine_bench: %s shape, SYNTHETIC weights (deterministic PRNG), kernels %s, %u cores\n", shape_name,
              std::string(isa_name(isa)).c_str(), std::thread::hardware_concurrency());
  std::printf("read GB/s: streaming read of a 1 GiB buffer on the decode's own thread pool, one pass after each decoded token, median\n");
  std::printf("prefill: %d-token prompt; decode: %d tokens after it\n", prompt_len, decode_tokens);
  std::printf("load average at start: %s", load_average().c_str());
  std::printf("RSS excludes that 1 GiB buffer\n\n");
  std::printf("%-6s %3s %12s %12s %10s %10s %10s %10s %12s %9s %12s\n", "format", "thr", "prefill t/s", "decode t/s",
              "eff GB/s", "read GB/s", "% read BW", "pf/decode", "weights GiB", "RSS GiB", "kernel % BW");

  std::uint64_t peak_before_kernel = 0;
  for (const std::string& fname : formats) {
    const auto type = tensor_type_from_name(fname);
    if (!type) {
      std::fprintf(stderr, "unknown format %s\n", fname.c_str());
      return 2;
    }
    std::optional<Model> model;
    {
      ThreadPool build_pool(0);
      auto m = make_synthetic(shape, shape_name, *type, k_synthetic_seed, build_pool);
      if (!m) {
        std::fprintf(stderr, "%s\n", m.error().to_string().c_str());
        return 1;
      }
      model = std::move(*m);
      pack_for_isa(*model, isa, build_pool);
    }
    const double bytes_per_token = double(model->decode_bytes_per_token());
    for (int threads : thread_counts) {
      ThreadPool pool(threads);
      const auto& s = model->shape;
      Transformer tf(*model, pool, isa,
                     make_contiguous_f32(int(s.layers), prompt_len + decode_tokens + 1, int(s.heads), int(s.kv_heads), int(s.head_dim), isa),
                     prompt_len);
      std::vector<int> prompt(static_cast<std::size_t>(prompt_len));
      for (int i = 0; i < prompt_len; ++i) prompt[std::size_t(i)] = 1 + (i * 7919) % int(s.vocab - 1);
      std::vector<double> prefill_s, decode_s;
      for (int r = 0; r < runs; ++r) {
        const auto t0 = Clock::now();
        if (!tf.forward(prompt, 0).ok()) return 1;
        prefill_s.push_back(seconds_since(t0));
      }
      // Decode tokens alternate with read-bandwidth passes, so both medians sample the same
      // minutes of a host whose bandwidth drifts (other tenants, other builds).
      std::vector<double> read_samples;
      int token = 5;
      for (int i = 0; i < decode_tokens; ++i) {
        const auto t0 = Clock::now();
        if (!tf.forward({&token, 1}, prompt_len + i).ok()) return 1;
        decode_s.push_back(seconds_since(t0));
        token = 1 + (token * 31) % int(s.vocab - 1);
        read_samples.push_back(read_bandwidth_gbps(bw_buf, bw_bytes, pool, 1));
      }
      const double read_gbps = median(read_samples);
      const double prefill_tps = prompt_len / median(prefill_s);
      const double decode_tps = 1.0 / median(decode_s);
      const double eff_gbps = bytes_per_token * decode_tps / 1e9;
      const double rss_gib = double(current_rss_bytes()) / (1u << 30) - bw_gib;  // before the kernel's own buffer
      // The kernel's 512 MiB matrix must not count in the run's peak: keep the peak so far and
      // reset VmHWM after the matrix is freed (Linux: clear_refs "5").
      peak_before_kernel = std::max(peak_before_kernel, peak_rss_bytes());
      const double kernel_share = kernel_share_of_read(*type, isa, pool, 9);
      std::ofstream("/proc/self/clear_refs") << "5";
      std::printf("%-6s %3d %12.1f %12.2f %10.2f %10.2f %9.1f%% %9.2fx %12.3f %9.3f %11.1f%%\n", fname.c_str(), threads, prefill_tps,
                  decode_tps, eff_gbps, read_gbps, 100.0 * eff_gbps / read_gbps, prefill_tps / decode_tps,
                  double(model->weight_bytes()) / (1u << 30), rss_gib, 100.0 * kernel_share);
      std::fflush(stdout);
    }
  }
  std::free(bw_buf);
  std::printf("load average at end: %s", load_average().c_str());
  std::printf("\npeak resident memory of the run (VmHWM) minus the 1 GiB buffer: %.3f GiB\n",
              double(std::max(peak_before_kernel, peak_rss_bytes())) / (1u << 30) - bw_gib);
  std::printf("targets: decode >= 85%% of read BW for q8_0/q4_0 at 2 threads; prefill/decode >= 2.3x (q4_0), 3.4x (q8_0)\n");
  return 0;
}
