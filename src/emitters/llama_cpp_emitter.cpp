// llama.cpp: a `llama-server` launch script and the same arguments as an argument file, one
// option per line. Flags as in llama.cpp common/arg.cpp of the build docs/emitters.md names
// (k_llama_cpp_build): `-fa on|off|auto`; speculative decoding by `--spec-type draft-simple`
// and `--spec-draft-n-max/-n-min` (PR #22964, which removed `--draft-max/--draft-min`); memory
// by `--load-mode` (PR #20834; `--mlock` and `--no-mmap` became aliases where the last one
// wins, then were removed). A quantized V cache needs flash attention (llama.cpp issue #10378:
// "V cache quantization requires flash_attn"), so `-fa on` goes with any quantized KV type.
#include <array>

#include "emitters/emit_functions.hpp"
#include "emitters/plan_facts.hpp"

namespace trilemma::emitters {
namespace {

// The CMake line that builds llama.cpp with each backend (none for the NPUs).
constexpr auto k_builds = backend_table<std::string_view>({
    {Backend::cpu, "cmake -B build"},
    {Backend::metal, "cmake -B build -DGGML_METAL=ON"},
    {Backend::cuda, "cmake -B build -DGGML_CUDA=ON"},
    {Backend::vulkan, "cmake -B build -DGGML_VULKAN=ON"},
    {Backend::opencl, "cmake -B build -DGGML_OPENCL=ON"},
});

// Single-quotes a value when the shell (or xargs) would split or expand it.
std::string quoted(const std::string& v) {
  const bool plain = !v.empty() && v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                       "0123456789._/+-:=@,") == std::string::npos;
  if (plain) return v;
  std::string s = "'";
  for (char c : v) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return s + "'";
}

// The llama.cpp build whose flags this emitter writes (docs/emitters.md keeps the flag list).
constexpr std::string_view k_llama_cpp_build = "b10587";

std::string ngl(const PlanFacts& f) { return f.layers ? std::to_string(f.layers + 1) : "999"; }


std::optional<NotExpressed> has_it(const DeploymentConfig&) { return std::nullopt; }

// llama.cpp's answer to each KV strategy (emitter.hpp, kv_gap_table).
constexpr auto k_llama_cpp_kv_gaps = kv_gap_table<>({
    {KvStrategy::contiguous, has_it},
    {KvStrategy::paged, [](const DeploymentConfig&) -> std::optional<NotExpressed> {
      return NotExpressed{"kv_strategy", "paged", "llama.cpp allocates the KV cache for the whole -c context up front",
                          "a contiguous cache of -c tokens (peak memory is the contiguous figure)"};
    }},
    {KvStrategy::sliding, [](const DeploymentConfig& c) -> std::optional<NotExpressed> {
      return NotExpressed{"kv_strategy", describe_kv_strategy(c),
                          "llama.cpp has no imposed sliding-window KV cache; --context-shift with --keep " + std::to_string(c.kv_params.sliding.sinks) +
                              " is the nearest (it drops half the context when full)",
                          "a full cache of -c tokens"};
    }},
    {KvStrategy::offload, [](const DeploymentConfig& c) -> std::optional<NotExpressed> {
      return NotExpressed{"kv_strategy", describe_kv_strategy(c),
                          "llama.cpp cannot keep a share of the KV cache in a slower tier (--no-kv-offload moves all of it to host memory)",
                          "a resident cache of -c tokens"};
    }},
});
}  // namespace

Result<Emission> emit_llama_cpp(const solver::PlanDocument& plan) {
  const PlanFacts f = plan_facts(plan);
  const auto& c = f.config;
  const std::string backend_name(info(c.backend).name);
  Emission e;
  std::vector<std::string> notes;
  auto set = [&](const std::string& flag, const std::string& value) { e.settings.emplace_back(flag, value); };

  set("-m", f.model_file);
  set("-c", std::to_string(c.context));
  if (c.threads) set("-t", std::to_string(c.threads));
  set("-b", std::to_string(f.batch));
  set("-ub", std::to_string(f.ubatch));
  notes.push_back("-b/-ub: llama.cpp's defaults (2048/512) capped at the plan's context");
  std::string kv(info(c.kv_type).name);
  // llama.cpp refuses a quantized cache whose head size is not a whole number of its blocks
  // (stories260K's head size 8 with q8_0's 32-element blocks fails to create the context).
  const std::uint32_t block = info(c.kv_type).block_elems;
  const bool kv_fits = block <= 1 || !f.head_dim || f.head_dim % block == 0;
  if (!kv_fits) {
    e.not_expressed.push_back({"kv_type", kv,
                               "llama.cpp needs the head size (" + std::to_string(f.head_dim) + ") to be a multiple of " + kv +
                                   "'s " + std::to_string(block) + "-element block",
                               "f16"});
    kv = "f16";
  }
  set("-ctk", kv);
  set("-ctv", kv);
  if (kv_fits && (c.kv_type == TensorType::q8_0 || c.kv_type == TensorType::q4_0)) {
    set("-fa", "on");
    notes.push_back("-fa on: a quantized V cache requires flash attention (llama.cpp #10378); builds before b6325 take a bare -fa");
  }
  const std::optional<std::string_view>& build = k_builds[std::size_t(c.backend)].spelling;
  if (!build)
    e.not_expressed.push_back({"backend", backend_name, "llama.cpp has no " + backend_name + " backend", "cpu"});
  if (f.accelerator && build) {
    set("-ngl", ngl(f));
    notes.push_back("-ngl " + ngl(f) + ": every layer and the output on the " + backend_name + " backend");
  }
  if (c.speculative.has_draft_weights()) {
    set("-md", f.draft_file);
    // Without a type a draft file alone does not turn speculation on (the default is none).
    set("--spec-type", "draft-simple");
    set("--spec-draft-n-max", std::to_string(c.speculative.draft_len));
    set("--spec-draft-n-min", std::to_string(c.speculative.draft_len));
    if (f.accelerator && build) set("-ngld", "999");
    notes.push_back("--spec-draft-n-min = --spec-draft-n-max: the estimate assumes g = " + std::to_string(c.speculative.draft_len) +
                    " drafted tokens per target pass");
    if (c.speculative.kind == DraftKind::self)
      notes.push_back("self-speculation: the draft is a " + std::string(info(c.speculative.draft_weights).name) +
                      " copy of the same model");
  }
  // One --load-mode carries both choices (the old --mlock --no-mmap pair kept only the last).
  const std::string load_mode = f.mlock ? (f.no_mmap ? "mlock" : "mmap+mlock") : "none";
  if (f.mlock || f.no_mmap) set("--load-mode", load_mode);
  if (f.mlock)
    notes.push_back("--load-mode " + load_mode + ": the plan leaves " +
                    std::to_string(static_cast<int>(f.memory_headroom * 100 + 0.5)) +
                    "% of usable memory free; pinning keeps the weights the estimate counts as resident");
  if (f.no_mmap)
    notes.push_back("--load-mode " + load_mode +
                    ": no mapping, the weights live in VRAM on a discrete GPU; a host mapping would only add resident memory");

  common_not_expressed(f, "llama.cpp", e.not_expressed);
  if (auto gap = k_llama_cpp_kv_gaps[static_cast<std::size_t>(c.kv_strategy)](c)) e.not_expressed.push_back(std::move(*gap));

  std::string script = "#!/bin/sh\n";
  std::string args;
  auto header = header_lines(f, "llama.cpp");
  header.push_back("flags of llama.cpp " + std::string(k_llama_cpp_build) + " or later (docs/emitters.md)");
  for (const auto& h : header) script += "# " + h + "\n", args += "# " + h + "\n";
  if (build) script += "# build: " + std::string(*build) + " && cmake --build build --target llama-server\n";
  for (const auto& n : notes) script += "# " + n + "\n";
  for (const auto& n : e.not_expressed) script += "# " + describe(n) + "\n", args += "# " + describe(n) + "\n";
  script += "# llama-cli takes the same arguments (it ignores the draft model); the argument file:\n"
            "#   grep -v '^#' FILE.args | xargs llama-server\n";
  script += "exec llama-server";
  for (const auto& [flag, value] : e.settings) {
    const std::string opt = value.empty() ? flag : flag + " " + quoted(value);
    script += " \\\n  " + opt;
    args += opt + "\n";
  }
  script += " \\\n  \"$@\"\n";
  e.files.push_back({"command", "", script});
  e.files.push_back({"arguments", ".args", args});
  return e;
}

}  // namespace trilemma::emitters
