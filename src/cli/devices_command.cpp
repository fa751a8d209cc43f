// `trilemma devices list|show ID|validate [PATH...]|probe [--out FILE]`
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "cli/json_output.hpp"
#include "cli/log.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "devices/device_db.hpp"
#include "devices/device_loader.hpp"
#include "cli/host_measurer.hpp"
#include "io/atomic_write.hpp"

namespace trilemma::cli {
namespace {

using nlohmann::json;

json fractions_json(const std::vector<std::pair<std::string, double>>& table) {
  json out = json::object();
  for (const auto& [key, value] : table) out[key] = value;
  return out;
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(); }

json fractions_json_count(const std::vector<std::pair<std::string, std::uint32_t>>& table) {
  json out = json::object();
  for (const auto& [k, n] : table) out[k] = n;
  return out;
}

json calibration_json(const devices::Calibration& c) {
  json backends = json::object();
  for (const auto& b : c.backends)
    backends[b.backend] = {{"bandwidth_fraction", fractions_json(b.bandwidth_fraction)},
                           {"compute_fraction", fractions_json(b.compute_fraction)},
                           {"decode_compute_fraction", fractions_json(b.decode_compute_fraction)},
                           {"attention_fraction", fractions_json(b.attention_fraction)},
                           {"prefill_attention_fraction", fractions_json(b.prefill_attention_fraction)},
                           {"overhead_ms", optional_json(b.overhead_ms)},
                           {"overhead_us_per_layer", optional_json(b.overhead_us_per_layer)},
                           {"speculative_round_ms", optional_json(b.speculative_round_ms)},
                           {"runtime_mib", optional_json(b.runtime_mib)},
                           {"scratch_fraction", optional_json(b.scratch_fraction)},
                           {"sources", fractions_json_count(b.sources)},
                           {"at_bound", b.at_bound}};
  return {{"fitted_on", c.fitted_on}, {"files", c.files}, {"points", c.points ? json(*c.points) : json()},
          {"error_before", optional_json(c.error_before)}, {"error_after", optional_json(c.error_after)},
          {"backends", backends}};
}

json figure_json(const devices::ProbeFigure& f) {
  return {{"best", f.best}, {"median", f.median}, {"worst", f.worst}, {"runs", f.runs}};
}

json probe_json(const devices::ProbeRecord& r) {
  return {{"when", r.when}, {"load_average", optional_json(r.load_average)}, {"clock_ghz", r.clock_ghz},
          {"bandwidth_gbps", figure_json(r.bandwidth_gbps)}, {"bandwidth_thread_time_gbps", figure_json(r.bandwidth_thread_time_gbps)}, {"f32_kernel", r.f32_kernel}, {"int8_kernel", r.int8_kernel},
          {"f32_one_core", figure_json(r.f32_one_core)}, {"f32_all_cores", figure_json(r.f32_all_cores)},
          {"int8_one_core", figure_json(r.int8_one_core)}, {"int8_all_cores", figure_json(r.int8_all_cores)},
          {"f32_theoretical", r.f32_theoretical}, {"int8_theoretical", r.int8_theoretical},
          {"f32_theoretical_basis", r.f32_theoretical_basis}, {"int8_theoretical_basis", r.int8_theoretical_basis}};
}

// What the probe measured, each peak beside the theoretical one.
void print_probe(const devices::Device& d, const devices::ProbeRecord& r) {
  auto spread = [](const devices::ProbeFigure& f, int digits) {
    return "best of " + std::to_string(f.runs) + ", median " + fixed(f.median, digits) + ", worst " + fixed(f.worst, digits);
  };
  const double cores = d.total_cores();
  std::cout << "  probed     " << r.when << ", load average " << (r.load_average ? fixed(*r.load_average, 2) : "unknown")
            << ", clock " << fixed(r.clock_ghz, 2) << " GHz (measured)\n"
            << "             bandwidth " << fixed(d.peak_bandwidth_gbps, 1) << " GB/s: wall time " << fixed(r.bandwidth_gbps.best, 1)
            << " (" << spread(r.bandwidth_gbps, 1) << "); threads' CPU time " << fixed(r.bandwidth_thread_time_gbps.best, 1)
            << " (" << spread(r.bandwidth_thread_time_gbps, 1) << ")\n";
  auto peak = [&](const char* name, const devices::ProbeFigure& one, const devices::ProbeFigure& all, double theoretical,
                  const std::string& basis) {
    const double p = one.best * cores;
    std::cout << "             " << name << " peak " << fixed(p, 0) << " G(FL)OP/s = one core " << fixed(one.best, 1) << " ("
              << spread(one, 1) << ") x " << cores << "; all cores at once " << fixed(all.best, 0) << "\n"
              << "               theoretical " << fixed(theoretical, 0) << " = " << basis << "; measured/theoretical "
              << fixed(theoretical > 0 ? p / theoretical : 0, 2) << "\n";
  };
  peak("f32 ", r.f32_one_core, r.f32_all_cores, r.f32_theoretical, r.f32_theoretical_basis);
  peak("int8", r.int8_one_core, r.int8_all_cores, r.int8_theoretical, r.int8_theoretical_basis);
}

// Every compute path the device has a peak for, G(FL)OP/s with all cores.
json peaks_json(const devices::Device& d) {
  json out = json::object();
  for (const auto& p : compute_paths())
    if (auto g = d.peak_gops(p.path)) out[std::string(p.name)] = *g;
  return out;
}

json range_json(const Range& r) { return {{"low", r.low}, {"mid", r.mid}, {"high", r.high}}; }

// power.llm_w as {backend: {decode, prefill}} (a phase without a measurement is null).
json llm_power_json(const devices::Device& d) {
  json out = json::object();
  for (const auto& m : d.measured_power)
    out[m.backend] = {{"decode", m.decode_w ? range_json(*m.decode_w) : json()}, {"prefill", m.prefill_w ? range_json(*m.prefill_w) : json()}};
  return out;
}

json sustained_json(const devices::Device& d) {
  json out = json::array();
  for (const auto& s : d.sustained) out.push_back({{"minutes", s.minutes}, {"fraction", range_json(s.fraction)}});
  return out;
}

json device_json(const devices::Device& d) {
  const json calibration = d.calibration ? calibration_json(*d.calibration) : json();  // null unless fitted
  json clusters = json::array();
  for (const auto& c : d.clusters)
    clusters.push_back({{"kind", c.kind}, {"cores", c.cores}, {"core", c.core}, {"clock_ghz", c.clock_ghz},
                        {"fp32_flops_per_cycle", c.fp32_flops_per_cycle},
                        {"fp16_flops_per_cycle", optional_json(c.fp16_flops_per_cycle)},
                        {"int8_dot_ops_per_cycle", optional_json(c.int8_dot_ops_per_cycle)},
                        {"int8_matmul_ops_per_cycle", optional_json(c.int8_matmul_ops_per_cycle)},
                        {"rates_source", c.rates_source}});
  json sources = json::array();
  for (const auto& s : d.sources) sources.push_back({{"fields", s.fields}, {"url", s.url}, {"basis", s.basis}, {"note", s.note}});
  return {{"id", d.id}, {"name", d.name}, {"vendor", d.vendor}, {"class", d.device_class},
          {"ram_gib", d.ram_gib}, {"ram_options_gib", d.ram_options_gib}, {"usable_gib", devices::usable_memory_gib(d)},
          {"unified_memory", d.unified_memory}, {"memory_type", d.memory_type},
          {"peak_bandwidth_gbps", d.peak_bandwidth_gbps}, {"bandwidth_basis", d.bandwidth_basis},
          {"cpu_read_gbps", optional_json(d.cpu_read_gbps)},
          {"cpu_read_kind", d.cpu_read_kind ? json(std::string(info(*d.cpu_read_kind).name)) : json()},
          {"tdp_w", d.tdp_w ? json(*d.tdp_w) : json()}, {"battery_wh", optional_json(d.battery_wh)},
          {"llm_w", llm_power_json(d)}, {"sustained", sustained_json(d)}, {"isa", d.isa}, {"clusters", clusters},
          {"cpu_peak_gflops", d.cpu_peak_gflops()}, {"features", d.cpu_features}, {"backends", d.backends},
          {"gpu", d.gpu_name}, {"gpu_fp32_tflops", d.gpu_fp32_tflops ? json(*d.gpu_fp32_tflops) : json()},
          {"gpu_fp16_tflops", optional_json(d.gpu_fp16_tflops)}, {"gpu_fp16_tensor_tflops", optional_json(d.gpu_fp16_tensor_tflops)},
          {"gpu_int8_tensor_tops", optional_json(d.gpu_int8_tensor_tops)},
          {"npu_int8_tops", optional_json(d.npu_int8_tops)}, {"npu_int4_tops", optional_json(d.npu_int4_tops)},
          {"npu_fp16_tflops", optional_json(d.npu_fp16_tflops)}, {"peak_gops", peaks_json(d)}, {"origin", d.origin},
          {"sources", sources}, {"notes", d.notes},
          {"measured_compute_gflops", optional_json(d.measured_compute_gflops)},
          {"measured_int8_gflops", optional_json(d.measured_int8_gflops)}, {"calibration", calibration},
          {"probe", d.probe ? probe_json(*d.probe) : json()}};
}

int list(bool as_json) {
  auto all = devices::builtin_devices();
  if (!all.ok()) return report_error(all.error());
  if (as_json) {
    json out = json::array();
    for (const auto& d : *all) out.push_back(device_json(d));
    std::cout << json_text(out) << "\n";
    return k_exit_ok;
  }
  std::cout << pad("id", 32) << pad("class", 8) << pad("RAM GiB", 9) << pad("usable", 8) << pad("GB/s", 8) << "name\n";
  for (const auto& d : *all)
    std::cout << pad(d.id, 32) << pad(d.device_class, 8) << pad(fixed(d.ram_gib, d.ram_gib < 1 ? 3 : 0), 9)
              << pad(fixed(devices::usable_memory_gib(d), 1), 8) << pad(fixed(d.peak_bandwidth_gbps, 1), 8) << d.name << "\n";
  std::cout << all->size() << " devices (plus `host`, this machine)\n";
  return k_exit_ok;
}

// What docs/power.md reads: the envelope, the battery, measured draw under LLM load, throttling.
void print_power(const devices::Device& d) {
  auto watts = [](const Range& r) { return r.low == r.high ? fixed(r.mid, 1) + " W" : fixed(r.low, 1) + "-" + fixed(r.high, 1) + " W"; };
  if (d.tdp_w) std::cout << "  power      " << fixed(*d.tdp_w, 0) << " W " << d.power_envelope << "\n";
  if (d.battery_wh) std::cout << "  battery    " << fixed(*d.battery_wh, 2) << " Wh (the reference device's)\n";
  for (const auto& m : d.measured_power)
    std::cout << "  llm power  " << m.backend << ": " << (m.decode_w ? "decode " + watts(*m.decode_w) + " " : "")
              << (m.prefill_w ? "prefill " + watts(*m.prefill_w) : "") << " (measured)\n";
  for (const auto& s : d.sustained)
    std::cout << "  sustained  x" << fixed(s.fraction.mid, 2)
              << (s.fraction.low < s.fraction.high ? " (" + fixed(s.fraction.low, 2) + "-" + fixed(s.fraction.high, 2) + ")" : std::string())
              << " of peak speed after " << fixed(s.minutes, 0) << " min (measured)\n";
}

// Memory, bandwidth, cores, accelerators and peaks: what the roofline reads.
void print_hardware(const devices::Device& d) {
  std::cout << d.name << " (" << d.id << ", " << d.device_class << ")\n"
            << "  memory     " << fixed(d.ram_gib, 1) << " GiB " << d.memory_type << ", usable "
            << fixed(devices::usable_memory_gib(d), 2) << " GiB, " << (d.unified_memory ? "unified" : "dedicated") << "\n"
            << "  bandwidth  " << fixed(d.peak_bandwidth_gbps, 1) << " GB/s (" << d.bandwidth_basis << ")"
            << (d.cpu_read_gbps && d.cpu_read_kind ? "; CPU cores measured " + fixed(*d.cpu_read_gbps, 2) + " GB/s (" +
                                                         std::string(info(*d.cpu_read_kind).name) + ")"
                                                   : std::string())
            << "\n"
            << "  cpu        " << d.isa << ", " << d.total_cores() << " cores, peak " << fixed(d.cpu_peak_gflops(), 0) << " GFLOP/s FP32\n";
  for (const auto& c : d.clusters)
    std::cout << "             " << c.cores << " x " << c.core << " @ " << fixed(c.clock_ghz, 2) << " GHz (" << c.kind << ")\n";
  if (!d.gpu_name.empty())
    std::cout << "  gpu        " << d.gpu_name << (d.gpu_fp32_tflops ? ", " + fixed(*d.gpu_fp32_tflops, 1) + " TFLOPS FP32" : "") << "\n";
  if (d.npu_int8_tops) std::cout << "  npu        " << fixed(*d.npu_int8_tops, 0) << " TOPS (" << d.npu_note << ")\n";
  std::cout << "  peaks      ";
  for (const auto& p : compute_paths())
    if (auto g = d.peak_gops(p.path)) std::cout << p.name << " " << fixed(*g, 0) << "  ";
  std::cout << "(G(FL)OP/s, all cores)\n";
}

// The device's calibration block (verify --calibrate, calibrate, fidelity --write).
void print_calibration(const devices::Calibration& c) {
  std::cout << "  calibrated " << c.fitted_on;
  if (c.points) std::cout << ", " << *c.points << " points";
  if (c.error_before && c.error_after)
    std::cout << ", median error " << fixed(*c.error_before * 100, 1) << "% -> " << fixed(*c.error_after * 100, 1) << "%";
  std::cout << "\n";
  for (const auto& b : c.backends) {
    std::cout << "             " << b.backend << ":";
    for (const auto& [k, v] : b.bandwidth_fraction) std::cout << " bandwidth[" << k << "] " << fixed(v, 3);
    for (const auto& [k, v] : b.compute_fraction) std::cout << " compute[" << k << "] " << fixed(v, 3);
    for (const auto& [k, v] : b.decode_compute_fraction) std::cout << " decode_compute[" << k << "] " << fixed(v, 3);
    for (const auto& [k, v] : b.attention_fraction) std::cout << " attention[" << k << "] " << fixed(v, 3);
    if (b.overhead_ms) std::cout << " overhead " << fixed(*b.overhead_ms, 2) << " ms";
    if (b.overhead_us_per_layer) std::cout << " overhead " << fixed(*b.overhead_us_per_layer, 0) << " us/layer";
    if (b.runtime_mib) std::cout << " runtime " << fixed(*b.runtime_mib, 0) << " MiB";
    std::cout << "\n";
  }
}

int show(const std::string& id, bool as_json) {
  auto d = devices::resolve_device(id);
  if (!d.ok()) return report_error(d.error());
  if (as_json) {
    std::cout << json_text(device_json(*d)) << "\n";
    return k_exit_ok;
  }
  print_hardware(*d);
  if (d->probe) print_probe(*d, *d->probe);
  if (d->calibration) print_calibration(*d->calibration);
  print_power(*d);
  std::cout << "  backends   ";
  for (const auto& b : d->backends) std::cout << b << " ";
  std::cout << "\n  sources\n";
  for (const auto& s : d->sources) {
    std::cout << "    - ";
    for (const auto& f : s.fields) std::cout << f << " ";
    std::cout << ": " << (s.url.empty() ? s.basis : s.url) << "\n";
  }
  if (!d->notes.empty()) std::cout << "  notes      " << d->notes << "\n";
  return k_exit_ok;
}

int validate(const std::vector<std::string>& paths, bool as_json) {
  std::vector<std::pair<std::string, std::string>> problems;  // file, message
  std::size_t checked = 0;
  if (paths.empty()) {
    auto all = devices::builtin_devices();
    checked = all.ok() ? all->size() : 0;
    if (!all.ok()) problems.emplace_back(all.error().file, all.error().to_string());
  }
  for (const auto& p : paths) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.path().extension() == ".yaml" && !devices::is_shared_table(e.path().stem().string()))
          files.push_back(e.path());
    } else {
      files.push_back(p);
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      ++checked;
      auto text = io::read_text_file(f);
      if (!text.ok()) {
        problems.emplace_back(f.string(), text.error().to_string());
        continue;
      }
      auto d = devices::parse_device(*text, f.string(), f.stem().string());
      if (!d.ok()) problems.emplace_back(f.string(), d.error().to_string());
    }
  }
  if (as_json) {
    json out = {{"checked", checked}, {"valid", problems.empty()}, {"problems", json::array()}};
    for (const auto& [f, m] : problems) out["problems"].push_back({{"file", f}, {"message", m}});
    std::cout << json_text(out) << "\n";
  } else {
    for (const auto& [f, m] : problems) std::cerr << "trilemma: error: " << m << "\n";
    std::cout << checked << " device file(s) checked, " << problems.size() << " invalid\n";
  }
  return problems.empty() ? k_exit_ok : k_exit_input;
}

int probe(const std::string& out, bool as_json) {
  auto d = devices::probe_host(engine_measurer(), [](const std::string& step) { spdlog::info("  probe: {}", step); });
  if (!d.ok()) return report_error(d.error());
  const std::string yaml = devices::device_to_yaml(*d);
  const std::string target = out.empty() ? devices::host_profile_path() : out;
  std::error_code ec;
  if (std::filesystem::path(target).has_parent_path())
    std::filesystem::create_directories(std::filesystem::path(target).parent_path(), ec);
  if (auto w = io::write_file_atomically(target, yaml); !w.ok()) return report_error(w.error());
  if (as_json) {
    std::cout << json_text(device_json(*d)) << "\n";
  } else {
    std::cout << d->name << "\n";
    print_probe(*d, *d->probe);
    std::cout << "written to " << target << "\n";
  }
  return k_exit_ok;
}

}  // namespace

void add_devices_command(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand("devices", "The device database: list, show, validate, probe the host");
  cmd->require_subcommand(1);
  static bool as_json = false;
  static std::string id, out;
  static std::vector<std::string> paths;
  auto* l = cmd->add_subcommand("list", "List built-in devices");
  l->add_flag("--json", as_json, "JSON output: an array of device objects (docs/json-schemas.md#device)");
  l->callback([&] { handler = [] { return list(as_json); }; });
  auto* s = cmd->add_subcommand("show", "Show one device with its sources");
  s->add_option("id", id, "device id, YAML path, or host")->required();
  s->add_flag("--json", as_json, "JSON output (docs/json-schemas.md#device)");
  s->callback([&] { handler = [] { return show(id, as_json); }; });
  auto* v = cmd->add_subcommand("validate", "Validate device YAML files (default: the built-in database)");
  v->add_option("paths", paths, "files or folders");
  v->add_flag("--json", as_json, "JSON output: {checked, valid, problems:[{file,message}]}");
  v->callback([&] { handler = [] { return validate(paths, as_json); }; });
  auto* p = cmd->add_subcommand("probe", "Measure this machine and write its device profile");
  p->add_option("--out", out, "where to write the profile (default: the host cache)");
  p->add_flag("--json", as_json, "JSON output (docs/json-schemas.md#device)");
  p->callback([&] { handler = [] { return probe(out, as_json); }; });
}

}  // namespace trilemma::cli
