#include "roofline/derating_tables.hpp"

#include <algorithm>

#include "io/embedded_data.hpp"
#include "io/yaml_fields.hpp"

namespace trilemma::roofline {
namespace {

constexpr const char* k_path = "devices/derating.yaml";
constexpr const char* k_fitted_path = "devices/fitted.yaml";

// {low, mid, high}: fractions in (0, 1.5], ordered.
Range read_range(io::FieldReader r) {
  Range out{r.positive("low"), r.positive("mid"), r.positive("high")};
  r.finish();
  if (!r.context().failed() && !(out.low <= out.mid && out.mid <= out.high))
    r.context().fail(r.node(), r.path(), "needs low <= mid <= high");
  return out;
}

std::optional<std::size_t> path_index(const std::string& name) {
  const auto p = compute_path_from_name(name);
  return p ? std::optional<std::size_t>(static_cast<std::size_t>(*p)) : std::nullopt;
}

// A mapping of named keys to ranges: `default` (required for priors), and classes or compute
// paths (and, for bandwidth, `measured_read` and `measured_copy`).
template <std::size_t N, class Index>
void read_keyed_ranges(io::FieldReader m, Range& fallback, std::array<std::optional<Range>, N>& named,
                       std::array<std::optional<Range>, k_cpu_read_kinds.size()>* measured, Index index_of, const std::string& what, bool need_default) {
  if (need_default || m.has("default")) fallback = read_range(m.map("default"));
  for (const auto& [key, key_node] : m.keys()) {
    if (key == "default") continue;
    if (const auto kind = cpu_read_kind_from_fraction_key(key); measured && kind) {
      (*measured)[static_cast<std::size_t>(*kind)] = read_range(m.map(key));
      continue;
    }
    const auto i = index_of(key);
    if (!i) {
      m.context().fail(key_node, m.field(key), "unknown " + what + " '" + key + "'");
      m.raw(key);
      continue;
    }
    named[*i] = read_range(m.map(key));
  }
  m.finish();
}

// One backend's row. Priors (devices/derating.yaml) need every field and sources; a fitted
// overlay (devices/fitted.yaml) sets only what it fitted, on top of the priors.
void read_backend(io::FieldReader row, BackendDerating& b, bool prior) {
  if (prior || row.has("bandwidth_fraction"))
    read_keyed_ranges(row.map("bandwidth_fraction"), b.bandwidth_fraction, b.bandwidth_by_class, &b.bandwidth_of_measured,
                      class_index, "device class", prior);
  if (prior || row.has("compute_fraction"))
    read_keyed_ranges(row.map("compute_fraction"), b.compute_fraction, b.compute_by_path, nullptr, path_index,
                      "compute path", prior);
  if (auto f = row.optional_map("compute_factor")) {
    for (const auto& [key, key_node] : f->keys()) {
      const auto w = weight_format_from_name(key);
      if (!w) {
        f->context().fail(key_node, f->field(key), "unknown weight format '" + key + "' (expected one of: " + weight_format_names() + ")");
        f->raw(key);
        continue;
      }
      b.compute_factor_by_format[static_cast<std::size_t>(*w)] = f->positive(key);
    }
    f->finish();
  }
  if (auto a = row.optional_map("attention_fraction")) b.attention_fraction = read_range(*a);
  if (auto chunk = row.optional_map("prefill_chunk")) {
    for (const auto& [key, key_node] : chunk->keys()) {
      // A device class, or the engine name of another runtime (as runtime_mib's keys).
      const auto n = chunk->count(key);
      if (n == 0) chunk->context().fail(key_node, chunk->field(key), "must be >= 1");
      if (const auto i = class_index(key)) b.prefill_chunk_by_class[*i] = n;
      else b.prefill_chunk_by_engine.emplace_back(key, n);
    }
    chunk->finish();
  }
  if (prior) b.overhead_ms = row.number("overhead_ms");
  else if (auto v = row.optional_number("overhead_ms")) b.overhead_ms = *v;
  if (auto v = row.optional_number("overhead_us_per_layer")) b.overhead_us_per_layer = *v;
  if (auto r = row.optional_map("runtime_mib")) {
    if (prior || r->has("default")) b.runtime_mib = r->number("default");
    for (const auto& [key, key_node] : r->keys()) {
      if (key == "default") continue;
      // A device class, or the engine name of another runtime (data/measurements' `engine`).
      if (const auto i = class_index(key)) b.runtime_by_class[*i] = r->number(key);
      else b.runtime_by_engine.emplace_back(key, r->number(key));
    }
    r->finish();
  } else if (prior) {
    row.context().fail(row.node(), row.field("runtime_mib"), "required field is missing");
  }
  if (!row.context().failed() && (b.overhead_ms < 0 || b.overhead_us_per_layer < 0 || b.runtime_mib < 0))
    row.context().fail(row.node(), row.path(), "overheads and runtime memory must be >= 0");
  if (prior) b.sources = io::read_source_texts(row);
  row.finish();
}

// Rows keyed by backend name.
template <class Each>
void read_backend_rows(io::FieldReader rows, Each each) {
  for (const auto& [name, key_node] : rows.keys()) {
    const auto backend = backend_from_name(name);
    if (!backend) {
      rows.context().fail(key_node, rows.field(name), "unknown backend '" + name + "' (expected one of: " + backend_names() + ")");
      rows.raw(name);
      continue;
    }
    each(*backend, rows.map(name));
  }
  rows.finish();
}

const io::EmbeddedFile* embedded(std::string_view path) {
  for (const auto& f : io::embedded_files())
    if (f.path == path) return &f;
  return nullptr;
}

}  // namespace

std::optional<std::size_t> class_index(const std::string& device_class) {
  for (std::size_t i = 0; i < k_device_classes.size(); ++i)
    if (device_class == k_device_classes[i]) return i;
  return std::nullopt;
}

Range BackendDerating::bandwidth(const std::string& device_class) const {
  const auto i = class_index(device_class);
  return i && bandwidth_by_class[*i] ? *bandwidth_by_class[*i] : bandwidth_fraction;
}

Range BackendDerating::compute(ComputePath path) const {
  const auto& r = compute_by_path[static_cast<std::size_t>(path)];
  return r ? *r : compute_fraction;
}

std::optional<double> BackendDerating::runtime_of(const std::string& engine) const {
  for (const auto& [name, mib] : runtime_by_engine)
    if (name == engine) return mib;
  return std::nullopt;
}

std::string BackendDerating::source_of(const std::string& field) const {
  const auto listing = [&](const std::string& f) -> const std::string* {
    for (const auto& [fields, text] : sources)
      if (std::find(fields.begin(), fields.end(), f) != fields.end()) return &text;
    return nullptr;
  };
  const std::string* text = listing(field);
  if (!text && field.find('.') != std::string::npos) text = listing(field.substr(0, field.rfind('.')));
  if (!text && !sources.empty()) text = &sources.front().second;
  const std::string prior = text ? *text : "";
  return fitted_on.empty() ? prior : "fitted: " + fitted_on + " (devices/fitted.yaml); priors: " + prior;
}

std::optional<std::uint32_t> BackendDerating::prefill_chunk_of(const std::string& engine) const {
  for (const auto& [name, n] : prefill_chunk_by_engine)
    if (name == engine) return n;
  return std::nullopt;
}

double BackendDerating::compute_factor(WeightFormat format) const {
  return compute_factor_by_format[static_cast<std::size_t>(format)].value_or(1.0);
}

double BackendDerating::runtime(const std::string& device_class) const {
  const auto i = class_index(device_class);
  return i && runtime_by_class[*i] ? *runtime_by_class[*i] : runtime_mib;
}

const BackendDerating* DeratingTables::find(Backend backend) const {
  const auto& row = backends[static_cast<std::size_t>(backend)];
  return row ? &*row : nullptr;
}

Result<DeratingTables> parse_derating_tables(const std::string& text, const std::string& file) {
  TRILEMMA_TRY(doc, io::parse_yaml(text, file));
  io::YamlContext ctx(file);
  io::FieldReader root(ctx, doc, "");
  DeratingTables t;
  read_backend_rows(root.map("backends"), [&](Backend b, io::FieldReader row) {
    auto& slot = t.backends[static_cast<std::size_t>(b)];
    slot.emplace();
    read_backend(row, *slot, true);
  });
  auto tiers = root.map("offload_tier");
  for (std::size_t i = 0; i < k_device_classes.size(); ++i) {
    auto tier = tiers.map(k_device_classes[i]);
    t.offload[i] = {tier.string("name"), tier.positive("read_gbps"), tier.string("url")};
    tier.finish();
  }
  tiers.finish();
  root.finish();
  if (!ctx.failed() && !t.find(Backend::cpu)) ctx.fail(doc["backends"], "backends", "the cpu row is required");
  if (ctx.failed()) return ctx.error();
  return t;
}

Status apply_fitted(const std::string& text, const std::string& file, DeratingTables& tables) {
  TRILEMMA_TRY(doc, io::parse_yaml(text, file));
  io::YamlContext ctx(file);
  io::FieldReader root(ctx, doc, "");
  const std::string fitted_on = root.string("fitted_on");
  if (auto rows = root.optional_map("backends"))
    read_backend_rows(*rows, [&](Backend b, io::FieldReader row) {
      auto& slot = tables.backends[static_cast<std::size_t>(b)];
      if (!slot) {
        ctx.fail(row.node(), row.path(), "fits a backend devices/derating.yaml has no row for");
        return;
      }
      read_backend(row, *slot, false);
      slot->fitted_on = fitted_on;
    });
  if (root.has("ranges")) {
    tables.error_bands.clear();
    for (auto r : root.map_list("ranges")) {
      ErrorBand b;
      const auto kind = r.choice("kind", {"cpu", "gpu", "npu"});
      b.kind = kind == "cpu" ? BackendKind::cpu : kind == "gpu" ? BackendKind::gpu : BackendKind::npu;
      b.phase = r.choice("phase", {"decode", "prefill"}) == "decode" ? Phase::decode : Phase::prefill;
      b.low = r.positive("low");
      b.high = r.positive("high");
      b.points = r.count("points");
      if (!r.context().failed() && !(b.low <= 1 && 1 <= b.high))
        r.context().fail(r.node(), r.path(), "needs low <= 1 <= high (measured / predicted)");
      r.finish();
      tables.error_bands.push_back(b);
    }
  }
  root.raw("devices");  // per-device calibrations: devices/device_db reads them
  root.finish();
  if (ctx.failed()) return ctx.error();
  return Ok{};
}

const ErrorBand* DeratingTables::error_band(BackendKind kind, Phase phase) const {
  for (const auto& b : error_bands)
    if (b.kind == kind && b.phase == phase) return &b;
  return nullptr;
}

Result<const DeratingTables*> prior_derating_tables() {
  static const Result<DeratingTables> tables = []() -> Result<DeratingTables> {
    const auto* f = embedded(k_path);
    if (!f) return make_error(ErrorKind::internal, k_path, "", "not compiled in");
    return parse_derating_tables(std::string(f->content), std::string(f->path));
  }();
  if (!tables.ok()) return tables.error();
  return &tables.value();
}

Result<const DeratingTables*> derating_tables() {
  static const Result<DeratingTables> tables = []() -> Result<DeratingTables> {
    TRILEMMA_TRY(priors, prior_derating_tables());
    DeratingTables t = *priors;
    if (const auto* f = embedded(k_fitted_path))
      if (auto ok = apply_fitted(std::string(f->content), std::string(f->path), t); !ok.ok()) return ok.error();
    return t;
  }();
  if (!tables.ok()) return tables.error();
  return &tables.value();
}

}  // namespace trilemma::roofline
