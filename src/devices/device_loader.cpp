#include "devices/device_loader.hpp"

#include <yaml-cpp/yaml.h>


#include "devices/core_table.hpp"
#include "io/yaml_fields.hpp"

namespace trilemma::devices {
namespace {

// Physical ceilings of a device's figures, far above any device (an HBM accelerator's 10 TB/s,
// a 6 GHz core, 100 PFLOPS): a figure past one is a typo or a hostile file, and a 1e308 GHz
// clock once made the roofline's axes infinite (reliability D18).
constexpr double k_max_bandwidth_gbps = 1e5, k_max_clock_ghz = 10, k_max_ops_per_cycle = 65536, k_max_tera = 1e5,
                 k_max_ram_gib = 1e5;

const std::vector<std::string> k_classes = {"phone", "laptop", "desktop", "board", "module", "mcu", "gpu"};
const std::vector<std::string> k_bases = {"published", "derived", "derived-assumed", "estimated", "measured"};
const std::vector<std::string> k_cluster_kinds = {"prime", "performance", "efficiency"};

void read_memory(io::FieldReader m, Device& d) {
  d.ram_options_gib = m.number_list("ram_options_gib");
  d.ram_gib = m.positive("default_ram_gib", k_max_ram_gib);
  d.unified_memory = m.boolean("unified");
  d.memory_type = m.string("type");
  d.data_rate_mts = m.optional_positive("data_rate_mts", 1e5);
  d.bus_width_bits = m.optional_positive("bus_width_bits", 16384);
  d.peak_bandwidth_gbps = m.positive("peak_bandwidth_gbps", k_max_bandwidth_gbps);
  d.bandwidth_basis = m.choice("bandwidth_basis", k_bases);
  d.cpu_read_gbps = m.optional_positive("cpu_read_gbps", k_max_bandwidth_gbps);
  if (d.cpu_read_gbps || m.has("cpu_read_kind")) {
    std::vector<std::string> kinds;
    for (const auto& k : k_cpu_read_kinds) kinds.emplace_back(k.name);
    d.cpu_read_kind = cpu_read_kind_from_name(m.choice("cpu_read_kind", kinds));
    if (!m.context().failed() && !d.cpu_read_gbps)
      m.context().fail(m.node(), m.field("cpu_read_kind"), "says how cpu_read_gbps was measured, and there is no cpu_read_gbps");
  }
  d.os_reserve_gib = m.optional_number("os_reserve_gib");
  if (d.os_reserve_gib && (*d.os_reserve_gib < 0 || *d.os_reserve_gib >= d.ram_gib))
    m.context().fail(m.node()["os_reserve_gib"], m.field("os_reserve_gib"), "must be >= 0 and below default_ram_gib");
  if (d.ram_options_gib.empty()) m.context().fail(m.node(), m.field("ram_options_gib"), "must list at least one size");
  for (double r : d.ram_options_gib)
    if (!(r > 0)) m.context().fail(m.node()["ram_options_gib"], m.field("ram_options_gib"), "sizes must be > 0");
  m.finish();
}

void read_cpu(io::FieldReader c, Device& d) {
  d.isa = c.choice("isa", isa_names());
  for (auto cl : c.map_list("clusters")) {
    CpuCluster k;
    k.kind = cl.choice("kind", k_cluster_kinds);
    k.cores = cl.count("cores");
    if (!cl.context().failed() && (k.cores == 0 || k.cores > 4096))
      cl.context().fail(cl.node()["cores"], cl.field("cores"), "must be 1..4096, got " + std::to_string(k.cores));
    k.core = cl.string("core");
    k.clock_ghz = cl.positive("clock_ghz", k_max_clock_ghz);
    k.fp32_flops_per_cycle = cl.positive("fp32_flops_per_cycle", k_max_ops_per_cycle);
    k.fp16_flops_per_cycle = cl.optional_positive("fp16_flops_per_cycle", k_max_ops_per_cycle);
    k.int8_dot_ops_per_cycle = cl.optional_positive("int8_dot_ops_per_cycle", k_max_ops_per_cycle);
    k.int8_matmul_ops_per_cycle = cl.optional_positive("int8_matmul_ops_per_cycle", k_max_ops_per_cycle);
    if (k.fp16_flops_per_cycle || k.int8_dot_ops_per_cycle || k.int8_matmul_ops_per_cycle) k.rates_source = c.context().file();
    cl.finish();
    d.clusters.push_back(k);
  }
  if (c.has("features")) d.cpu_features = c.string_list("features");
  else c.raw("features");
  if (!c.context().failed() && d.clusters.empty()) c.context().fail(c.node(), c.field("clusters"), "must list at least one cluster");
  c.finish();
}

// power: the envelope, and what was measured under LLM load (docs/power.md).
void read_power(io::FieldReader p, Device& d) {
  d.tdp_w = p.optional_positive("tdp_w", 1e4);
  d.power_envelope = p.optional_string("envelope").value_or("");
  d.battery_wh = p.optional_positive("battery_wh", 1e4);
  if (auto llm = p.optional_map("llm_w")) {
    for (const auto& [name, key_node] : llm->keys()) {
      if (!backend_from_name(name))
        llm->context().fail(key_node, llm->field(name), "unknown backend '" + name + "' (expected one of: " + backend_names() + ")");
      auto row = llm->map(name);
      MeasuredPower m{name, {}, {}};
      if (row.has("decode")) m.decode_w = row.range("decode");
      if (row.has("prefill")) m.prefill_w = row.range("prefill");
      if (!row.context().failed() && !m.decode_w && !m.prefill_w)
        row.context().fail(row.node(), row.path(), "needs decode, prefill or both (watts under LLM load)");
      row.finish();
      d.measured_power.push_back(std::move(m));
    }
    llm->finish();
  }
  d.sustained = read_sustained_points(p);
  p.finish();
}

void read_sources(io::FieldReader& root, Device& d) {
  for (auto s : root.map_list("sources")) {
    Source src;
    src.fields = s.string_list("fields");
    src.url = s.optional_string("url").value_or("");
    src.basis = s.optional_string("basis").value_or("");
    src.note = s.optional_string("note").value_or("");
    if (!s.context().failed() && src.url.empty() && src.basis.empty())
      s.context().fail(s.node(), s.path(), "a source needs a url or a basis");
    s.finish();
    d.sources.push_back(std::move(src));
  }
}

// Maps of a format or path name (or "all") -> fraction.
void read_fractions(io::FieldReader& c, const std::string& key, std::vector<std::pair<std::string, double>>& out) {
  if (auto m = c.optional_map(key)) {
    for (const auto& [name, key_node] : m->keys()) out.emplace_back(name, m->positive(name));
    m->finish();
  }
}

void read_backend_calibration(io::FieldReader& c, BackendCalibration& b) {
  read_fractions(c, "bandwidth_fraction", b.bandwidth_fraction);
  read_fractions(c, "compute_fraction", b.compute_fraction);
  read_fractions(c, "decode_compute_fraction", b.decode_compute_fraction);
  read_fractions(c, "attention_fraction", b.attention_fraction);
  read_fractions(c, "prefill_attention_fraction", b.prefill_attention_fraction);
  // Costs and amounts: a negative one made 14.6 GiB of weights fit an 8 GB board (reliability
  // D5). Upper bounds far past any fit: a second per pass, a TiB of runtime, 100x the scratch.
  b.overhead_ms = c.optional_non_negative("overhead_ms", 1e3);
  b.overhead_us_per_layer = c.optional_non_negative("overhead_us_per_layer", 1e6);
  b.speculative_round_ms = c.optional_non_negative("speculative_round_ms", 1e3);
  b.runtime_mib = c.optional_non_negative("runtime_mib", 1048576);
  b.scratch_fraction = c.optional_non_negative("scratch_fraction", 100);
  if (auto m = c.optional_map("sources")) {
    for (const auto& [name, key_node] : m->keys()) b.sources.emplace_back(name, m->count(name));
    m->finish();
  }
  if (c.has("at_bound")) b.at_bound = c.string_list("at_bound");
}

// `calibration`: what it was fitted on, then either one backend's factors at the top level
// (the CPU: host profiles written before per-backend calibrations) or a `backends` mapping.
}  // namespace

namespace {

ProbeFigure read_probe_figure(io::FieldReader f) {
  ProbeFigure out;
  out.best = f.positive("best");
  out.median = f.positive("median");
  out.worst = f.positive("worst");
  out.runs = f.count("runs");
  f.finish();
  return out;
}

ProbeRecord read_probe(io::FieldReader p) {
  ProbeRecord r;
  r.when = p.string("when");
  r.load_average = p.optional_number("load_average");
  r.clock_ghz = p.number("clock_ghz");
  r.bandwidth_gbps = read_probe_figure(p.map("bandwidth_gbps"));
  r.bandwidth_thread_time_gbps = read_probe_figure(p.map("bandwidth_thread_time_gbps"));
  r.f32_kernel = p.string("f32_kernel");
  r.int8_kernel = p.string("int8_kernel");
  r.f32_one_core = read_probe_figure(p.map("f32_one_core"));
  r.f32_all_cores = read_probe_figure(p.map("f32_all_cores"));
  r.int8_one_core = read_probe_figure(p.map("int8_one_core"));
  r.int8_all_cores = read_probe_figure(p.map("int8_all_cores"));
  r.f32_theoretical = p.number("f32_theoretical");
  r.int8_theoretical = p.number("int8_theoretical");
  r.f32_theoretical_basis = p.string("f32_theoretical_basis");
  r.int8_theoretical_basis = p.string("int8_theoretical_basis");
  p.finish();
  return r;
}

// A figure as the reader takes it back: a number when exact, else {low, mid, high}.
void emit_range(YAML::Emitter& out, const char* key, const Range& r) {
  out << YAML::Key << key << YAML::Value;
  if (r.low == r.high) out << r.mid;
  else out << YAML::Flow << YAML::BeginMap << YAML::Key << "low" << YAML::Value << r.low << YAML::Key << "mid" << YAML::Value << r.mid
           << YAML::Key << "high" << YAML::Value << r.high << YAML::EndMap;
}

void emit_probe_figure(YAML::Emitter& out, const char* key, const ProbeFigure& f) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "best" << YAML::Value << f.best
      << YAML::Key << "median" << YAML::Value << f.median << YAML::Key << "worst" << YAML::Value << f.worst << YAML::Key
      << "runs" << YAML::Value << f.runs << YAML::EndMap;
}

void emit_probe(YAML::Emitter& out, const ProbeRecord& r) {
  out << YAML::BeginMap << YAML::Key << "when" << YAML::Value << r.when;
  if (r.load_average) out << YAML::Key << "load_average" << YAML::Value << *r.load_average;
  out << YAML::Key << "clock_ghz" << YAML::Value << r.clock_ghz;
  emit_probe_figure(out, "bandwidth_gbps", r.bandwidth_gbps);
  emit_probe_figure(out, "bandwidth_thread_time_gbps", r.bandwidth_thread_time_gbps);
  out << YAML::Key << "f32_kernel" << YAML::Value << r.f32_kernel << YAML::Key << "int8_kernel" << YAML::Value << r.int8_kernel;
  emit_probe_figure(out, "f32_one_core", r.f32_one_core);
  emit_probe_figure(out, "f32_all_cores", r.f32_all_cores);
  emit_probe_figure(out, "int8_one_core", r.int8_one_core);
  emit_probe_figure(out, "int8_all_cores", r.int8_all_cores);
  out << YAML::Key << "f32_theoretical" << YAML::Value << r.f32_theoretical << YAML::Key << "int8_theoretical" << YAML::Value
      << r.int8_theoretical << YAML::Key << "f32_theoretical_basis" << YAML::Value << r.f32_theoretical_basis << YAML::Key
      << "int8_theoretical_basis" << YAML::Value << r.int8_theoretical_basis << YAML::EndMap;
}

}  // namespace

std::vector<SustainedPoint> read_sustained_points(io::FieldReader& row) {
  std::vector<SustainedPoint> out;
  if (!row.has("sustained")) return out;
  for (auto s : row.map_list("sustained")) {
    SustainedPoint point{s.positive("minutes"), s.range("fraction")};
    if (!s.context().failed() && point.fraction.high > 1)
      s.context().fail(s.node(), s.field("fraction"), "is a share of the first minute's speed: at most 1");
    if (!s.context().failed() && !out.empty() && point.minutes <= out.back().minutes)
      s.context().fail(s.node(), s.field("minutes"), "points must be in ascending minutes");
    s.finish();
    out.push_back(point);
  }
  return out;
}

Calibration read_calibration(io::FieldReader c) {
  Calibration cal;
  cal.fitted_on = c.string("fitted_on");
  if (c.has("files")) cal.files = c.string_list("files");
  else c.raw("files");
  cal.points = c.optional_count("points");
  cal.error_before = c.optional_number("error_before");
  cal.error_after = c.optional_number("error_after");
  if (auto backends = c.optional_map("backends")) {
    // keys() reports a key that is not a scalar (a map or sequence as key) instead of throwing.
    for (const auto& [name, key_node] : backends->keys()) {
      if (!backend_from_name(name))
        backends->context().fail(key_node, backends->field(name), "unknown backend '" + name + "' (expected one of: " + backend_names() + ")");
      auto b = backends->map(name);
      read_backend_calibration(b, cal.at(name));
      b.finish();
    }
    backends->finish();
  } else {
    read_backend_calibration(c, cal.at("cpu"));
  }
  c.finish();
  return cal;
}

namespace {

// Paths a cluster's file does not state come from the core table; a probed host's measured
// int8 rate (older profiles) stands for its int8 dot path.
void fill_core_rates(const std::vector<CoreRates>& table, Device& d) {
  for (auto& c : d.clusters) {
    const CoreRates* row = find_core(table, c.core);
    if (!row) continue;
    const bool from_table = !c.fp16_flops_per_cycle && !c.int8_dot_ops_per_cycle && !c.int8_matmul_ops_per_cycle;
    if (!c.fp16_flops_per_cycle) c.fp16_flops_per_cycle = row->fp16_flops_per_cycle;
    if (!c.int8_dot_ops_per_cycle) c.int8_dot_ops_per_cycle = row->int8_dot_ops_per_cycle;
    if (!c.int8_matmul_ops_per_cycle) c.int8_matmul_ops_per_cycle = row->int8_matmul_ops_per_cycle;
    if (from_table) c.rates_source = "devices/cores.yaml (" + c.core + ")";
  }
  if (d.measured_int8_gflops && d.clusters.size() == 1 && !d.clusters[0].int8_dot_ops_per_cycle) {
    auto& c = d.clusters[0];
    c.int8_dot_ops_per_cycle = *d.measured_int8_gflops / c.cores / c.clock_ghz;
    c.rates_source = "measured by the host probe";
  }
}

}  // namespace

Result<Device> parse_device(const std::string& yaml_text, const std::string& file, const std::string& expected_id) {
  TRILEMMA_TRY(doc, io::parse_yaml(yaml_text, file));
  io::YamlContext ctx(file);
  io::FieldReader root(ctx, doc, "");
  Device d;
  d.origin = file;
  d.id = root.id("id", expected_id);
  d.csv_id = root.optional_string("csv_id").value_or("");
  d.name = root.string("name");
  d.vendor = root.string("vendor");
  d.device_class = root.choice("class", k_classes);
  read_memory(root.map("memory"), d);
  if (auto p = root.optional_map("power")) read_power(*p, d);
  read_cpu(root.map("cpu"), d);
  if (auto g = root.optional_map("gpu")) {
    d.gpu_name = g->string("name");
    d.gpu_fp32_tflops = g->optional_positive("fp32_tflops", k_max_tera);
    d.gpu_fp16_tflops = g->optional_positive("fp16_tflops", k_max_tera);
    d.gpu_fp16_tensor_tflops = g->optional_positive("fp16_tensor_tflops", k_max_tera);
    d.gpu_int8_tensor_tops = g->optional_positive("int8_tensor_tops", k_max_tera);
    g->finish();
  }
  if (auto n = root.optional_map("npu")) {
    d.npu_int8_tops = n->optional_positive("int8_tops", k_max_tera);
    d.npu_int4_tops = n->optional_positive("int4_tops", k_max_tera);
    d.npu_fp16_tflops = n->optional_positive("fp16_tflops", k_max_tera);
    d.npu_note = n->string("note");
    n->finish();
  }
  d.backends = root.string_list("backends");
  for (std::size_t i = 0; i < d.backends.size() && !ctx.failed(); ++i) {
    if (!backend_from_name(d.backends[i]))
      ctx.fail(doc["backends"][i], "backends[" + std::to_string(i) + "]",
               "unknown backend '" + d.backends[i] + "' (expected one of: " + backend_names() + ")");
  }
  read_sources(root, d);
  d.notes = root.optional_string("notes").value_or("");
  if (auto c = root.optional_map("calibration")) d.calibration = read_calibration(*c);
  d.measured_compute_gflops = root.optional_positive("measured_compute_gflops", k_max_tera * 1000);
  d.measured_int8_gflops = root.optional_positive("measured_int8_gflops", k_max_tera * 1000);
  if (auto p = root.optional_map("probe")) d.probe = read_probe(*p);
  root.finish();
  if (!ctx.failed() && d.sources.empty()) ctx.fail(doc, "sources", "every device needs sources");
  if (ctx.failed()) return ctx.error();
  TRILEMMA_TRY(cores, core_table());
  fill_core_rates(*cores, d);
  return d;
}

void emit_calibration(YAML::Emitter& out, const Calibration& c) {
  out << YAML::BeginMap;
  out << YAML::Key << "fitted_on" << YAML::Value << c.fitted_on;
  if (!c.files.empty()) out << YAML::Key << "files" << YAML::Value << c.files;
  if (c.points) out << YAML::Key << "points" << YAML::Value << *c.points;
  if (c.error_before) out << YAML::Key << "error_before" << YAML::Value << *c.error_before;
  if (c.error_after) out << YAML::Key << "error_after" << YAML::Value << *c.error_after;
  out << YAML::Key << "backends" << YAML::Value << YAML::BeginMap;
  for (const auto& b : c.backends) {
    out << YAML::Key << b.backend << YAML::Value << YAML::BeginMap;
    const auto fractions = [&](const char* key, const std::vector<std::pair<std::string, double>>& table) {
      if (table.empty()) return;
      out << YAML::Key << key << YAML::Value << YAML::BeginMap;
      for (const auto& [k, v] : table) out << YAML::Key << k << YAML::Value << v;
      out << YAML::EndMap;
    };
    fractions("bandwidth_fraction", b.bandwidth_fraction);
    fractions("compute_fraction", b.compute_fraction);
    fractions("decode_compute_fraction", b.decode_compute_fraction);
    fractions("attention_fraction", b.attention_fraction);
    fractions("prefill_attention_fraction", b.prefill_attention_fraction);
    if (b.overhead_ms) out << YAML::Key << "overhead_ms" << YAML::Value << *b.overhead_ms;
    if (b.overhead_us_per_layer) out << YAML::Key << "overhead_us_per_layer" << YAML::Value << *b.overhead_us_per_layer;
    if (b.speculative_round_ms) out << YAML::Key << "speculative_round_ms" << YAML::Value << *b.speculative_round_ms;
    if (b.runtime_mib) out << YAML::Key << "runtime_mib" << YAML::Value << *b.runtime_mib;
    if (b.scratch_fraction) out << YAML::Key << "scratch_fraction" << YAML::Value << *b.scratch_fraction;
    if (!b.sources.empty()) {
      out << YAML::Key << "sources" << YAML::Value << YAML::Flow << YAML::BeginMap;
      for (const auto& [k, n] : b.sources) out << YAML::Key << k << YAML::Value << n;
      out << YAML::EndMap;
    }
    if (!b.at_bound.empty()) out << YAML::Key << "at_bound" << YAML::Value << b.at_bound;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::EndMap;
}

std::string device_to_yaml(const Device& d) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "id" << YAML::Value << d.id;
  if (!d.csv_id.empty()) out << YAML::Key << "csv_id" << YAML::Value << d.csv_id;
  out << YAML::Key << "name" << YAML::Value << d.name;
  out << YAML::Key << "vendor" << YAML::Value << d.vendor;
  out << YAML::Key << "class" << YAML::Value << d.device_class;
  out << YAML::Key << "memory" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "ram_options_gib" << YAML::Value << YAML::Flow << d.ram_options_gib;
  out << YAML::Key << "default_ram_gib" << YAML::Value << d.ram_gib;
  out << YAML::Key << "unified" << YAML::Value << d.unified_memory;
  out << YAML::Key << "type" << YAML::Value << d.memory_type;
  if (d.data_rate_mts) out << YAML::Key << "data_rate_mts" << YAML::Value << *d.data_rate_mts;
  if (d.bus_width_bits) out << YAML::Key << "bus_width_bits" << YAML::Value << *d.bus_width_bits;
  out << YAML::Key << "peak_bandwidth_gbps" << YAML::Value << d.peak_bandwidth_gbps;
  out << YAML::Key << "bandwidth_basis" << YAML::Value << d.bandwidth_basis;
  if (d.cpu_read_gbps) out << YAML::Key << "cpu_read_gbps" << YAML::Value << *d.cpu_read_gbps;
  if (d.cpu_read_kind) out << YAML::Key << "cpu_read_kind" << YAML::Value << std::string(info(*d.cpu_read_kind).name);
  if (d.os_reserve_gib) out << YAML::Key << "os_reserve_gib" << YAML::Value << *d.os_reserve_gib;
  out << YAML::EndMap;
  if (d.tdp_w || !d.power_envelope.empty() || d.battery_wh || !d.measured_power.empty() || !d.sustained.empty()) {
    out << YAML::Key << "power" << YAML::Value << YAML::BeginMap;
    if (d.tdp_w) out << YAML::Key << "tdp_w" << YAML::Value << *d.tdp_w;
    if (!d.power_envelope.empty()) out << YAML::Key << "envelope" << YAML::Value << d.power_envelope;
    if (d.battery_wh) out << YAML::Key << "battery_wh" << YAML::Value << *d.battery_wh;
    if (!d.measured_power.empty()) {
      out << YAML::Key << "llm_w" << YAML::Value << YAML::BeginMap;
      for (const auto& m : d.measured_power) {
        out << YAML::Key << m.backend << YAML::Value << YAML::Flow << YAML::BeginMap;
        if (m.decode_w) emit_range(out, "decode", *m.decode_w);
        if (m.prefill_w) emit_range(out, "prefill", *m.prefill_w);
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    if (!d.sustained.empty()) {
      out << YAML::Key << "sustained" << YAML::Value << YAML::BeginSeq;
      for (const auto& p : d.sustained) {
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "minutes" << YAML::Value << p.minutes;
        emit_range(out, "fraction", p.fraction);
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  out << YAML::Key << "cpu" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "isa" << YAML::Value << d.isa;
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq;
  for (const auto& c : d.clusters) {
    out << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << c.kind << YAML::Key << "cores" << YAML::Value
        << c.cores << YAML::Key << "core" << YAML::Value << c.core << YAML::Key << "clock_ghz" << YAML::Value
        << c.clock_ghz << YAML::Key << "fp32_flops_per_cycle" << YAML::Value << c.fp32_flops_per_cycle;
    // Rates the core table supplies are not copied: the table stays their one source.
    if (!c.rates_source.starts_with("devices/cores.yaml")) {
      if (c.fp16_flops_per_cycle) out << YAML::Key << "fp16_flops_per_cycle" << YAML::Value << *c.fp16_flops_per_cycle;
      if (c.int8_dot_ops_per_cycle) out << YAML::Key << "int8_dot_ops_per_cycle" << YAML::Value << *c.int8_dot_ops_per_cycle;
      if (c.int8_matmul_ops_per_cycle)
        out << YAML::Key << "int8_matmul_ops_per_cycle" << YAML::Value << *c.int8_matmul_ops_per_cycle;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (!d.cpu_features.empty()) out << YAML::Key << "features" << YAML::Value << YAML::Flow << d.cpu_features;
  out << YAML::EndMap;
  auto optional = [&](const char* key, const std::optional<double>& v) {
    if (v) out << YAML::Key << key << YAML::Value << *v;
  };
  if (!d.gpu_name.empty()) {
    out << YAML::Key << "gpu" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << d.gpu_name;
    optional("fp32_tflops", d.gpu_fp32_tflops);
    optional("fp16_tflops", d.gpu_fp16_tflops);
    optional("fp16_tensor_tflops", d.gpu_fp16_tensor_tflops);
    optional("int8_tensor_tops", d.gpu_int8_tensor_tops);
    out << YAML::EndMap;
  }
  if (!d.npu_note.empty()) {
    out << YAML::Key << "npu" << YAML::Value << YAML::BeginMap;
    optional("int8_tops", d.npu_int8_tops);
    optional("int4_tops", d.npu_int4_tops);
    optional("fp16_tflops", d.npu_fp16_tflops);
    out << YAML::Key << "note" << YAML::Value << d.npu_note << YAML::EndMap;
  }
  out << YAML::Key << "backends" << YAML::Value << YAML::Flow << d.backends;
  out << YAML::Key << "sources" << YAML::Value << YAML::BeginSeq;
  for (const auto& s : d.sources) {
    out << YAML::BeginMap << YAML::Key << "fields" << YAML::Value << YAML::Flow << s.fields;
    if (!s.url.empty()) out << YAML::Key << "url" << YAML::Value << s.url;
    if (!s.basis.empty()) out << YAML::Key << "basis" << YAML::Value << s.basis;
    if (!s.note.empty()) out << YAML::Key << "note" << YAML::Value << s.note;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (!d.notes.empty()) out << YAML::Key << "notes" << YAML::Value << d.notes;
  if (d.measured_compute_gflops)
    out << YAML::Key << "measured_compute_gflops" << YAML::Value << *d.measured_compute_gflops;
  if (d.measured_int8_gflops) out << YAML::Key << "measured_int8_gflops" << YAML::Value << *d.measured_int8_gflops;
  if (d.probe) {
    out << YAML::Key << "probe" << YAML::Value;
    emit_probe(out, *d.probe);
  }
  if (d.calibration) {
    out << YAML::Key << "calibration" << YAML::Value;
    emit_calibration(out, *d.calibration);
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace trilemma::devices
