#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>

#include "verify/measurement.hpp"

namespace trilemma::verify {
namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Result<nlohmann::json> run_once(const std::string& command) {
  // `exec` makes the engine this process's own child (not the shell's), and the variable asks it
  // to end when this process does: a verify stopped by SIGTERM leaves no engine running.
  FILE* p = popen(("TRILEMMA_DIE_WITH_PARENT=" + std::to_string(::getpid()) + " exec " + command).c_str(), "r");
  if (!p) return make_error(ErrorKind::io, "verify", "", "cannot start the engine: " + command);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  if (status != 0) {
    // stderr is merged into `out` on this path: its last line is the engine's error.
    while (!out.empty() && out.back() == '\n') out.pop_back();
    const std::string last = out.substr(out.find_last_of('\n') == std::string::npos ? 0 : out.find_last_of('\n') + 1);
    return make_error(ErrorKind::input, "verify", "", "the engine run failed: " + last);
  }
  try {
    return nlohmann::json::parse(out);
  } catch (const nlohmann::json::exception&) {
    return make_error(ErrorKind::internal, "verify", "", "the engine printed no JSON report");
  }
}

}  // namespace

Spread spread_of(std::vector<double> runs) {
  if (runs.empty()) return {};
  std::vector<double> v = runs;
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back(), std::move(runs)};
}

EngineSource::Commands EngineSource::commands(const RunPoint& p) const {
  // The warm-up loads the same weights and runs the same kernels with a short prompt: a 2K
  // prompt's warm-up would cost the grid a sixth of its time for nothing the short one misses.
  RunPoint short_point = p;
  short_point.prompt_tokens = std::min<std::uint32_t>(p.prompt_tokens, 64);
  short_point.decode_tokens = std::min<std::uint32_t>(p.decode_tokens, 8);
  const std::string warm_up = run_command(short_point);
  std::string eval;
  if (m_eval_text && p.model_file)
    eval = quote(m_binary.string()) + " eval --json" + common_flags(p) + " --text " + quote(m_eval_text->string()) + " 2>&1";
  return {run_command(p), warm_up, eval};
}

std::string EngineSource::common_flags(const RunPoint& p) const {
  // What run and eval share: the weights, threads and the KV cache.
  std::string common;
  if (p.model_file) {
    common += " --model " + quote(p.model_file->string());
    if (p.tokenizer_file) common += " --tokenizer " + quote(p.tokenizer_file->string());
  } else {
    common += " --synthetic " + quote(p.model_id);
  }
  common += " --weights " + engine_weights_name(p);
  common += " --threads " + std::to_string(p.config.threads);
  const auto& c = p.config;
  common += " --kv " + std::string(info(c.kv_type).name) + " --kv-strategy " + std::string(info(c.kv_strategy).name);
  common += info(c.kv_strategy).engine_flags(c, p.full_kv_bytes);
  return common;
}

std::string EngineSource::run_command(const RunPoint& p) const {
  // A prompt of single-byte tokens: synthetic tokenizers map each byte to one token.
  const std::string prompt(p.prompt_tokens > 2 ? p.prompt_tokens - 2 : 1, 'a');
  const auto& c = p.config;
  std::string cmd = quote(m_binary.string()) + " run --json --quiet" + common_flags(p);
  cmd += " --steps " + std::to_string(p.decode_tokens);
  if (c.speculative.kind == DraftKind::self)
    cmd += " --draft self --draft-weights " + std::string(info(p.draft_engine_weights).name) + " --draft-len " +
           std::to_string(c.speculative.draft_len);
  if (c.speculative.kind == DraftKind::layers)
    cmd += " --draft layers --draft-layers " + std::to_string(c.speculative.draft_layers) + " --draft-len " +
           std::to_string(c.speculative.draft_len);
  if (c.speculative.kind == DraftKind::model)
    cmd += " --draft model --draft-model " + quote(c.speculative.draft_model) + " --draft-weights " +
           std::string(info(p.draft_engine_weights).name) + " --draft-len " + std::to_string(c.speculative.draft_len);
  // A model file's own vocabulary: its opening words repeated to the point's length.
  cmd += p.model_file ? " --prompt " + quote("Once upon a time") + " --prompt-tokens " + std::to_string(p.prompt_tokens) : " --prompt " + quote(prompt);
  return cmd + " 2>&1";
}

Result<Measurement> EngineSource::summarize(const RunPoint& p, const std::string& eval, const std::vector<nlohmann::json>& runs) {
  std::vector<double> ttft, prefill, decode, rss;
  Measurement m;
  for (const auto& j : runs) {
    ttft.push_back(j.value("ttft_ms", 0.0));
    prefill.push_back(j.value("prefill_tok_s", 0.0));
    decode.push_back(j.value("decode_tok_s", 0.0));
    rss.push_back(j.value("peak_rss_bytes", 0.0));
    m.weight_bytes = j.value("weight_bytes", 0.0);
    m.prompt_tokens = static_cast<std::uint32_t>(j["prompt_tokens"].size());
    m.decode_tokens = static_cast<std::uint32_t>(j["tokens"].size());
    m.synthetic = j.value("synthetic", true);
    m.kernels = j.value("kernels", "");
    m.weights = j.value("weights", "");
    m.acceptance = j.value("acceptance_rate", 0.0);
    m.kv_bytes = j.value("kv_allocated_bytes", 0.0);
  }
  m.ttft_ms = spread_of(ttft);
  m.prefill_tok_s = spread_of(prefill);
  m.decode_tok_s = spread_of(decode);
  m.peak_rss_bytes = spread_of(rss).median;
  m.runs = int(runs.size());
  if (!eval.empty()) {
    const std::string key = engine_weights_name(p) + " " + std::string(info(p.config.kv_type).name);
    auto it = std::find_if(m_evaluated.begin(), m_evaluated.end(), [&](const auto& e) { return e.first == key; });
    if (it == m_evaluated.end()) {
      TRILEMMA_TRY(j, run_once(eval));
      m_evaluated.emplace_back(key, std::pair{j.value("kl_mean", 0.0), j.value("top1_agreement", 0.0)});
      it = std::prev(m_evaluated.end());
    }
    m.kl_mean = it->second.first;
    m.top1 = it->second.second;
  }
  return m;
}

Result<Measurement> EngineSource::measure(const RunPoint& p) {
  TRILEMMA_TRY(all, measure_all({p}, nullptr));
  return all.front();
}

Result<std::vector<Measurement>> EngineSource::measure_all(const std::vector<RunPoint>& points, const Progress& progress) {
  // Round 0 warms up every point (page cache, CPU frequency) with a short prompt; rounds
  // 1..runs each run every point once. Interleaving spreads each point's runs over the whole
  // grid's time, so a slow minute on a shared host costs every point one run instead of
  // costing one point all of its.
  std::vector<Commands> cmds;
  for (const auto& p : points) cmds.push_back(commands(p));
  std::vector<std::vector<nlohmann::json>> runs(points.size());
  const std::size_t total = std::size_t(m_runs + 1) * points.size();
  for (int round = 0; round <= m_runs; ++round)
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (progress) progress(std::size_t(round) * points.size() + i, total, i);
      TRILEMMA_TRY(j, run_once(round == 0 ? cmds[i].warm_up : cmds[i].run));
      if (round > 0) runs[i].push_back(std::move(j));
    }
  std::vector<Measurement> out;
  for (std::size_t i = 0; i < points.size(); ++i) {
    TRILEMMA_TRY(m, summarize(points[i], cmds[i].eval, runs[i]));
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace trilemma::verify
