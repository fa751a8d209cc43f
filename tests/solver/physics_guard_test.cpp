// The physics guard: every device of the database x catalog model x weight format x backend the
// planner can cost, in one plain configuration (all cores, f16 KV, contiguous, no speculation),
// must predict figures the hardware allows. Each violation is printed; none is allowed.
//   - every figure positive and finite;
//   - decode at most the bandwidth roof (peak bandwidth / bytes read per token) and at least a
//     tenth of the roofline's speed at the peaks with the pass's fixed cost (a twentieth when
//     the decode is compute-bound);
//   - prefill at most the compute roof of its matrix products (2 x active parameters per token at
//     the path's peak);
//   - a larger model (more weight bytes, KV bytes, parameters and layers per token) never decodes
//     faster than a smaller one in the same configuration;
//   - a fatter format (more weight bytes per token) never decodes faster than a leaner one,
//     unless the leaner one's weights take longer to multiply than to read (its compute path or
//     factor is slower), the one case the roofline allows.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <sstream>

#include "devices/device_db.hpp"
#include "models/catalog.hpp"
#include "solver/estimate.hpp"

using namespace trilemma;

namespace {

struct Cell {
  std::string model;
  double weight_bytes = 0, kv_bytes = 0, params = 0, decode = 0;
  std::uint32_t layers = 0;  // each pass pays a fixed cost per layer: a deeper small model may be slower
  bool compute_limited = false;  // its weights' arithmetic takes longer than reading them
};

// One plain configuration: all cores, f16 KV, contiguous, the model's context up to 4096.
DeploymentConfig plain(const solver::PreparedModel& pm, const BackendInfo& b, WeightFormat w) {
  DeploymentConfig c;
  c.weights = w;
  c.backend = b.backend;
  c.kv_type = TensorType::f16;
  c.context = std::min<std::uint32_t>(4096, pm.model->shape.context);
  if (b.max_context) c.context = std::min(c.context, *b.max_context);
  c.prompt = std::min<std::uint32_t>(512, c.context);
  return c;
}

Cell cell_of(const solver::PreparedModel& pm, const solver::PreparedDevice& pd, const roofline::Efficiency& eff,
             const DeploymentConfig& c, const Estimate& e) {
  const double weights = pm.bytes(c.weights).per_token;
  const double read_s = weights / (eff.bandwidth_gbps * eff.bandwidth_fraction.mid * 1e9);
  const double peak = pd.device->peak_gops(eff.decode_path, c.threads).value_or(0) * 1e9 * eff.decode_compute_fraction.mid;
  const double compute_s = peak > 0 ? 2.0 * pm.active_params / peak : 0;
  return {pm.model->id, weights, e.latency.bytes_per_token - weights, pm.active_params, e.latency.decode_tok_s.mid,
          pm.model->shape.layers, compute_s > read_s};
}

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

TEST_CASE("physics guard: no device x model x format x backend predicts what the hardware cannot", "[solver][physics]") {
  const auto devices = devices::builtin_devices().value();
  const auto catalog = models::builtin_models().value();
  std::vector<solver::PreparedModel> models;
  for (const auto& m : catalog) models.push_back(solver::PreparedModel::prepare(m));
  std::vector<std::string> violations;
  auto violation = [&](const std::string& what) { violations.push_back(what); };
  std::size_t cells = 0;
  for (const auto& d : devices) {
    const auto pd = solver::PreparedDevice::prepare(d).value();
    for (const auto& b : backends()) {
      if (!d.has_backend(b.backend)) continue;
      for (const auto& w : weight_formats()) {
        const auto* eff = pd.efficiency(b.backend, w.format);
        if (!eff) continue;
        // Per format: every model's cell, for the larger-model rule.
        std::vector<Cell> row;
        for (const auto& pm : models) {
          const DeploymentConfig c = plain(pm, b, w.format);
          const auto e = solver::estimate(pm, pd, c);
          if (!e.ok()) continue;
          ++cells;
          const auto& l = e->latency;
          std::ostringstream at;
          at << d.id << " " << pm.model->id << " " << w.name << " " << b.name << ": ";
          const std::string where = at.str();
          for (const auto& [name, v] : std::initializer_list<std::pair<const char*, double>>{
                   {"decode_tok_s.low", l.decode_tok_s.low}, {"decode_tok_s.mid", l.decode_tok_s.mid},
                   {"decode_tok_s.high", l.decode_tok_s.high}, {"ttft_ms.low", l.ttft_ms.low}, {"ttft_ms.mid", l.ttft_ms.mid},
                   {"ttft_ms.high", l.ttft_ms.high}, {"prefill_tok_s.mid", l.prefill_tok_s.mid},
                   {"bytes_per_token", l.bytes_per_token}, {"memory.total", e->memory.total_bytes},
                   {"memory.weights", e->memory.weights_bytes}})
            if (!finite_positive(v)) violation(where + name + " = " + std::to_string(v));
          if (!(l.decode_tok_s.low <= l.decode_tok_s.mid && l.decode_tok_s.mid <= l.decode_tok_s.high))
            violation(where + "decode range out of order");
          for (double v : {e->accuracy.kld.mid, e->accuracy.ppl_delta_pct.mid, e->accuracy.points.mid})
            if (!std::isfinite(v) || v < 0) violation(where + "accuracy figure " + std::to_string(v));
          if (e->energy.known && !finite_positive(e->energy.joules_per_token.mid))
            violation(where + "J/token " + std::to_string(e->energy.joules_per_token.mid));
          const double bandwidth_roof = d.peak_bandwidth_gbps * 1e9 / l.bytes_per_token;
          if (l.decode_tok_s.mid > bandwidth_roof * 1.0001)
            violation(where + "decode " + std::to_string(l.decode_tok_s.mid) + " tok/s above the bandwidth roof " +
                      std::to_string(bandwidth_roof));
          // The floor: a tenth of the roofline's speed at the peaks, with the backend's fixed cost
          // of a pass (a 135M model on a GPU is bound by it, not by bytes or FLOPs); a twentieth
          // where the decode is compute-bound, since llama.cpp's CPU dot products reach about a
          // tenth of the instruction peak (devices/fitted.yaml cpu_int8_dot) and the formats with
          // lookup tables less (iq2_xs x0.61).
          const double peak = d.peak_gops(eff->decode_path, c.threads).value_or(0) * 1e9;
          const double roof_s = std::max(l.bytes_per_token / (d.peak_bandwidth_gbps * 1e9), peak > 0 ? l.flops_per_token / peak : 0.0) +
                                eff->pass_overhead_ms(pm.model->shape.layers) / 1e3;
          if (l.decode_tok_s.mid < (l.bound == "compute" ? 0.05 : 0.1) / roof_s)
            violation(where + "decode " + std::to_string(l.decode_tok_s.mid) + " tok/s below a tenth of the roof " +
                      std::to_string(1 / roof_s) + " (" + l.bound + "-bound)");
          const double matmul_peak = d.peak_gops(eff->path, c.threads).value_or(0) * 1e9;
          const double prefill_roof = matmul_peak / (2.0 * pm.active_params);
          if (matmul_peak > 0 && l.prefill_tok_s.mid > prefill_roof * 1.0001)
            violation(where + "prefill " + std::to_string(l.prefill_tok_s.mid) + " tok/s above the compute roof " +
                      std::to_string(prefill_roof));
          row.push_back(cell_of(pm, pd, *eff, c, *e));
        }
        for (const auto& big : row)
          for (const auto& small : row)
            if (big.weight_bytes > small.weight_bytes * 1.001 && big.kv_bytes >= small.kv_bytes && big.params > small.params &&
                big.layers >= small.layers && big.decode > small.decode * 1.001)
              violation(d.id + " " + b.name.data() + " " + std::string(w.name) + ": " + big.model + " decodes faster (" +
                        std::to_string(big.decode) + " tok/s) than the smaller " + small.model + " (" +
                        std::to_string(small.decode) + ")");
      }
      // Fatter formats, per model: a leaner format decodes at least as fast unless its weights'
      // arithmetic, not their bytes, limits it (another compute path or factor: the roofline's
      // one exception).
      for (const auto& pm : models) {
        std::vector<std::pair<std::string, Cell>> by_format;
        for (const auto& w : weight_formats()) {
          const auto* eff = pd.efficiency(b.backend, w.format);
          if (!eff) continue;
          const DeploymentConfig c = plain(pm, b, w.format);
          const auto e = solver::estimate(pm, pd, c, nullptr, false);
          if (e.ok()) by_format.push_back({std::string(w.name), cell_of(pm, pd, *eff, c, *e)});
        }
        for (const auto& [fat_name, fat] : by_format)
          for (const auto& [lean_name, lean] : by_format)
            if (fat.weight_bytes > lean.weight_bytes * 1.001 && fat.decode > lean.decode * 1.001 && !lean.compute_limited)
              violation(d.id + " " + pm.model->id + " " + b.name.data() + ": " + fat_name + " decodes faster (" +
                        std::to_string(fat.decode) + " tok/s) than the leaner " + lean_name + " (" +
                        std::to_string(lean.decode) + "), whose weights are bandwidth-limited");
      }
    }
  }
  CAPTURE(cells);
  CHECK(cells > 10000);
  for (const auto& v : violations) UNSCOPED_INFO(v);
  CHECK(violations.size() == 0);
}
