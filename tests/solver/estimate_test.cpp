// The estimate functions against hand-computed cases (docs/estimates.md): each term of a decode
// step, a prefill and a plan's memory, on a made-up device and derating table whose numbers make
// the arithmetic checkable by hand.
#include <catch2/catch.hpp>

#include "devices/device_loader.hpp"
#include "models/catalog.hpp"
#include "roofline/derating_tables.hpp"
#include "solver/estimate.hpp"

using namespace trilemma;

namespace {

// 4 cores at 2 GHz: FP32 16 flop/cycle -> 128 GFLOP/s; the core's SDOT 64 op/cycle -> 512
// GOP/s; SMMLA 128 -> 1024 GOP/s. 100 GB/s of DRAM.
const std::string k_device = R"(id: hand-board
name: Hand Board
vendor: Nobody
class: board
memory: {ram_options_gib: [8], default_ram_gib: 8, unified: true, type: LPDDR5, peak_bandwidth_gbps: 100, bandwidth_basis: derived}
cpu:
  isa: arm64
  clusters:
    - {kind: performance, cores: 4, core: Hand Core, clock_ghz: 2.0, fp32_flops_per_cycle: 16, int8_dot_ops_per_cycle: 64, int8_matmul_ops_per_cycle: 128}
backends: [cpu]
sources:
  - {fields: [memory, cpu], basis: "made up for a test"}
)";

// CPU: half the bandwidth, a quarter of the SDOT path, 0.15 of SMMLA, 1 ms per pass, 100 MiB.
const std::string k_tables = R"(backends:
  cpu:
    bandwidth_fraction:
      default: {low: 0.4, mid: 0.5, high: 0.6}
    compute_fraction:
      default: {low: 0.2, mid: 0.25, high: 0.3}
      cpu_int8_matmul: {low: 0.1, mid: 0.15, high: 0.2}
    attention_fraction: {low: 0.5, mid: 0.5, high: 0.5}
    overhead_ms: 1
    runtime_mib: {default: 100}
    prefill_chunk: {engine-b: 64}
    sources: [{fields: [bandwidth_fraction], basis: test}]
offload_tier:
  phone: {name: f, read_gbps: 4, url: u}
  laptop: {name: f, read_gbps: 4, url: u}
  desktop: {name: f, read_gbps: 4, url: u}
  board: {name: f, read_gbps: 2, url: u}
  module: {name: f, read_gbps: 4, url: u}
  mcu: {name: f, read_gbps: 4, url: u}
  gpu: {name: f, read_gbps: 4, url: u}
)";

struct EstimateFixture {
  devices::Device device = devices::parse_device(k_device, "hand-board.yaml", "hand-board").value();
  roofline::DeratingTables tables = roofline::parse_derating_tables(k_tables, "tables.yaml").value();
  models::Model model = models::resolve_model("llama-3.2-1b").value();
  solver::PreparedModel pm = solver::PreparedModel::prepare(model);
  solver::PreparedDevice pd = solver::PreparedDevice::prepare(device, tables).value();
  DeploymentConfig config() const {
    DeploymentConfig c;
    c.weights = WeightFormat::q4_0;
    c.kv_type = TensorType::f16;
    c.context = 1024;
    c.prompt = 512;
    c.threads = 4;
    return c;
  }
};

}  // namespace

TEST_CASE("solver::machines: peak x fraction per phase, from the path each phase takes", "[solver][estimate]") {
  EstimateFixture f;
  const auto& e = *f.pd.efficiency(Backend::cpu, WeightFormat::q4_0);
  const auto decode = solver::machines(f.pd, e, Backend::cpu, TensorType::f16, 4, 16, roofline::AttentionPhase::decode);
  const auto prefill = solver::machines(f.pd, e, Backend::cpu, TensorType::f16, 4, 16, roofline::AttentionPhase::prefill);
  CHECK(decode.mid.bandwidth_gbps == Approx(50));        // 100 x 0.5
  CHECK(decode.slow.bandwidth_gbps == Approx(40));
  CHECK(decode.mid.compute_gflops == Approx(512 * 0.25));  // SDOT: decode is a matrix-vector product
  CHECK(prefill.mid.compute_gflops == Approx(1024 * 0.15));  // SMMLA for the prompt's matrix products
  CHECK(decode.mid.attention_gflops == Approx(128 * 0.5));  // attention on the FP32 path
  CHECK(decode.mid.overhead_ms == 1);
  // Two threads take two cores' peak.
  CHECK(solver::machines(f.pd, e, Backend::cpu, TensorType::f16, 2, 16, roofline::AttentionPhase::decode).mid.compute_gflops ==
        Approx(256 * 0.25));
}

TEST_CASE("solver::decode_step: weights and KV at the bandwidth, the matmuls at the vector path", "[solver][estimate]") {
  EstimateFixture f;
  const auto c = f.config();
  const auto& e = *f.pd.efficiency(Backend::cpu, c.weights);
  const auto m = solver::machines(f.pd, e, Backend::cpu, c.kv_type, 4, f.model.shape.layers, roofline::AttentionPhase::decode);
  const auto step = solver::decode_step(f.pm, f.pd, c, m);
  const double weights = f.pm.bytes(c.weights).per_token;
  // KV read at 1024 positions: 2 x 16 layers x 8 heads x 64 x 1024 x 2 bytes = 32 MiB.
  CHECK(step.cost.attention_bytes == Approx(2.0 * 16 * 512 * 1024 * 2));
  CHECK(step.cost.flops == Approx(2 * f.pm.active_params));
  CHECK(step.cost.attention_flops == Approx(4.0 * 16 * 2048 * 1024));
  const double weights_ms = std::max(weights / 50e9, 2 * f.pm.active_params / 128e9) * 1e3;
  const double attention_ms = std::max(step.cost.attention_bytes / 50e9, step.cost.attention_flops / 64e9) * 1e3;
  CHECK(step.ms.mid == Approx(weights_ms + attention_ms + 1.0));
  // 2.5 GFLOP at 128 GOP/s (19 ms) outlasts 0.7 GB at 50 GB/s (14 ms) on this slow made-up core.
  CHECK(2 * f.pm.active_params / 128e9 > weights / 50e9);
  CHECK(step.bound == "compute");
  CHECK(step.ms.low < step.ms.mid);
  CHECK(step.ms.mid < step.ms.high);
}

TEST_CASE("solver::prefill: passes of the backend's chunk, each streaming the weights", "[solver][estimate]") {
  EstimateFixture f;
  auto c = f.config();
  c.prompt = 1024;
  c.context = 2048;
  const auto& e = *f.pd.efficiency(Backend::cpu, c.weights);
  const auto m = solver::machines(f.pd, e, Backend::cpu, c.kv_type, 4, f.model.shape.layers, roofline::AttentionPhase::prefill);
  const auto p = solver::prefill(f.pm, c, m, e.prefill_chunk, f.pm.bytes(c.weights).total, 1.0);
  CHECK(p.passes == 2);  // 1024 tokens in llama.cpp's 512-token micro-batches
  CHECK(p.cost.bytes == Approx(2 * f.pm.bytes(c.weights).total));
  CHECK(p.cost.flops == Approx(1024 * 2 * f.pm.active_params));
  // Attention over half the prompt on average: 4 x 16 x 2048 x 512 per token.
  CHECK(p.cost.attention_flops == Approx(1024 * 4.0 * 16 * 2048 * 512));
  const double weights_ms = std::max(p.cost.bytes / 50e9, p.cost.flops / 153.6e9) * 1e3;
  const double attention_ms = std::max(p.cost.attention_bytes / 50e9, p.cost.attention_flops / 64e9) * 1e3;
  CHECK(p.ms.mid == Approx(weights_ms + attention_ms + 1.0 + 1.0));  // one overhead per pass
}

TEST_CASE("solver::estimate: a runtime's own prefill chunk sets the passes and the scratch", "[solver][estimate]") {
  EstimateFixture f;
  auto c = f.config();  // 512-token prompt
  const auto plain = solver::estimate(f.pm, f.pd, c, nullptr, false);
  REQUIRE(plain.ok());
  c.runtime = "engine-b";  // prefills 64 tokens a pass (the tables above)
  const auto chunked = solver::estimate(f.pm, f.pd, c, nullptr, false);
  REQUIRE(chunked.ok());
  const auto& s = f.model.shape;
  const double per_token_scratch = 4.0 * (double(s.vocab) + 3.0 * s.hidden + s.q_dim() + 2.0 * s.kv_dim() + 2.0 * s.ffn);
  const auto& e = *f.pd.efficiency(Backend::cpu, c.weights);
  CHECK(plain->memory.scratch_bytes == Approx(e.scratch_fraction * 512 * per_token_scratch));
  CHECK(chunked->memory.scratch_bytes == Approx(e.scratch_fraction * 64 * per_token_scratch));
  // Eight passes instead of one: seven more per-pass overheads (1 ms each in the tables above;
  // prefill is compute-bound here, so streaming the weights eight times stays hidden).
  CHECK(chunked->latency.ttft_ms.mid == Approx(plain->latency.ttft_ms.mid + 7.0));
  c.runtime = "another";  // not in the tables: the backend's 512
  const auto other = solver::estimate(f.pm, f.pd, c, nullptr, false);
  REQUIRE(other.ok());
  CHECK(other->memory.scratch_bytes == Approx(plain->memory.scratch_bytes));
}

TEST_CASE("solver::memory_estimate: weights, KV, scratch and the runtime", "[solver][estimate]") {
  EstimateFixture f;
  auto c = f.config();
  c.context = 8192;
  const auto& e = *f.pd.efficiency(Backend::cpu, c.weights);
  const auto m = solver::memory_estimate(f.pm, f.pd, c, e);
  CHECK(m.weights_bytes == f.pm.bytes(c.weights).total);
  CHECK(m.kv_bytes == Approx(2.0 * 16 * 512 * 8192 * 2));  // 256 MiB of f16 K and V
  CHECK(m.runtime_bytes == 100 * 1048576.0);
  // Offload keeps a share resident and spills the rest.
  c.kv_strategy = KvStrategy::offload;
  c.kv_params.offload.resident_fraction = 0.25;
  const auto o = solver::memory_estimate(f.pm, f.pd, c, e);
  CHECK(o.kv_bytes == Approx(0.25 * m.kv_bytes));
  CHECK(o.kv_spilled_bytes == Approx(0.75 * m.kv_bytes));
}

TEST_CASE("solver::estimate: the formats' TTFTs differ as their compute paths say", "[solver][estimate]") {
  EstimateFixture f;
  auto c = f.config();
  auto ttft = [&](WeightFormat w) {
    c.weights = w;
    return solver::estimate(f.pm, f.pd, c).value().latency.ttft_ms.mid;
  };
  // F32 on 128 GFLOP/s x 0.25 against Q4_0 on SMMLA's 1024 x 0.15: the prompt's FLOPs dominate.
  const double f32 = ttft(WeightFormat::f32), q4 = ttft(WeightFormat::q4_0);
  CHECK(f32 / q4 == Approx((1024 * 0.15) / (128 * 0.25)).epsilon(0.1));
  const auto e = solver::estimate(f.pm, f.pd, f.config()).value();
  CHECK(e.latency.compute_path == "cpu_int8_matmul");
  CHECK(e.latency.path_peak_gops == Approx(1024));
  CHECK(e.basis.at(1).find("cpu_int8_matmul peak 1024 GOP/s x 0.15") != std::string::npos);
}

TEST_CASE("solver::estimate: a backend the device cannot cost is an input error, not a crash", "[solver][estimate]") {
  EstimateFixture f;
  auto c = f.config();
  c.backend = Backend::qnn;
  const auto e = solver::estimate(f.pm, f.pd, c);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().kind == ErrorKind::input);
  CHECK(e.error().message.find("'qnn'") != std::string::npos);
}
