// Side-by-side: the same GGUF through `trilemma run` and through real llama.cpp
// (llama_cpp_side.mjs), alternated A/B/A/B, medians of --reps runs, ratios trilemma / llama.cpp.
//   node bench/side_by_side/side_by_side.mjs [--trilemma build/src/trilemma] [--model tinyllama-1.1b]
//        [--formats f16,q8_0,q4_0] [--threads 1,2] [--prefill 64,512] [--depths 0,1920]
//        [--decode 32] [--reps 3] [--dir /tmp/trilemma-side-by-side] [--json]
// Depth 1920, not 2048: TinyLlama's context is 2048 tokens, and the history and the 32 decoded
// tokens must fit in it. Files are written once by `trilemma export --synthetic MODEL --weights FORMAT` into --dir.
// The host's read bandwidth is measured in the same run (`trilemma devices probe`), and each
// decode rate is also given as a share of it: tok/s x the weight bytes the engine holds / GB/s.
// trilemma runs with an f16 KV cache, llama.cpp's default, on as many prompt tokens as llama.cpp (both counts are printed).
// docs/performance.md keeps the table with the host it ran on.
import {execFileSync} from "node:child_process";
import {existsSync, mkdirSync} from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const defaults = {
  trilemma: path.join(here, "../../build/src/trilemma"), model: "tinyllama-1.1b", formats: "f16,q8_0,q4_0",
  threads: "1,2", prefill: "64,512", depths: "0,1920", decode: "32", reps: "3", dir: "/tmp/trilemma-side-by-side",
};
const args = {...defaults, json: false};
for (let i = 2; i < process.argv.length; ++i) {
  const key = process.argv[i].replace(/^--/, "");
  if (key === "json") args.json = true;
  else if (key in defaults && i + 1 < process.argv.length) args[key] = process.argv[++i];
  else {
    console.error(`unknown or incomplete option: ${process.argv[i]} (see the header of ${path.basename(process.argv[1])})`);
    process.exit(2);
  }
}
const list = (s) => s.split(",").filter(Boolean);
const numbers = (s) => list(s).map(Number);
const reps = Number(args.reps), decode = Number(args.decode);
const log = (line) => { if (!args.json) console.log(line); else console.error(line); };

// Plain English, repeated by the peer as needed; both engines see llama.cpp's token prefix of it.
const text = "Once upon a time there was a little girl who lived in a village near the forest. " +
  "Every morning she walked to the river with her grandmother to fetch water, and on the way " +
  "they talked about the birds, the weather and the people of the village. ";

const run = (file, argv) => {
  try {
    return execFileSync(file, argv, {encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "pipe"]});
  } catch (e) {
    console.error(`${path.basename(file)} ${argv.slice(0, 3).join(" ")} ... failed:\n${e.stderr ?? e.message}`);
    process.exit(1);
  }
};
const llama = (gguf, threads, prefill, depth, steps) =>
  JSON.parse(run(process.execPath, [path.join(here, "llama_cpp_side.mjs"), gguf, String(threads), String(prefill),
    String(depth), String(steps), text]));
// tokens > 0: the prompt cut or repeated to exactly that many tokens, BOS included, as the peer's is
// (trilemma's tokenizer may split llama.cpp's detokenized text into a few more tokens).
const trilemma = (gguf, threads, prompt, steps, tokens = 0) =>
  JSON.parse(run(args.trilemma, ["run", "-m", gguf, "--threads", String(threads), "--prompt", prompt, "--steps",
    String(steps), "--prompt-tokens", String(tokens), "--kv", "f16", "--quiet", "--json"]));
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

mkdirSync(args.dir, {recursive: true});
const probe = JSON.parse(run(args.trilemma, ["devices", "probe", "--out", path.join(args.dir, "host.yaml"), "--json"]));
const bandwidth = probe.peak_bandwidth_gbps;
log(`host: ${probe.name}, ${probe.isa}, read bandwidth ${bandwidth.toFixed(1)} GB/s (measured now, ${probe.bandwidth_basis})`);

const rows = [];
for (const format of list(args.formats)) {
  const gguf = path.join(args.dir, `${args.model}-${format}.gguf`);
  if (!existsSync(gguf)) run(args.trilemma, ["export", "--synthetic", args.model, "--weights", format, "--out", gguf]);
  for (const threads of numbers(args.threads)) {
    const measure = (phase, a, b) => {
      const runs = {llama: [], trilemma: []};
      for (let r = 0; r < reps; ++r) runs.llama.push(a()), runs.trilemma.push(b(runs.llama.at(-1)));
      return {phase, runs};
    };
    const phases = [];
    for (const p of numbers(args.prefill))
      phases.push(measure(`pp${p}`, () => llama(gguf, threads, p, 0, 0), (l) => trilemma(gguf, threads, l.prompt_text, 1, p)));
    for (const d of numbers(args.depths)) {
      // The history text at depth d comes from a prefill-only peer run (untimed here).
      const history = d > 0 ? llama(gguf, threads, d, 0, 0).prompt_text : "Once";
      phases.push(measure(`tg${decode}@${d}`, () => llama(gguf, threads, 0, d, decode), () => trilemma(gguf, threads, history, decode, d > 0 ? d : 0)));
    }
    for (const {phase, runs} of phases) {
      const pp = phase.startsWith("pp");
      const rate = (o) => (pp ? o.prefill_tok_s : o.decode_tok_s);
      const row = {
        format, threads, phase,
        llama_cpp_tok_s: median(runs.llama.map(rate)), trilemma_tok_s: median(runs.trilemma.map(rate)),
        llama_cpp_peak_rss_mib: median(runs.llama.map((o) => o.peak_rss_bytes)) / 1048576,
        trilemma_peak_rss_mib: median(runs.trilemma.map((o) => o.peak_rss_bytes)) / 1048576,
        trilemma_memory_breakdown_mib: median(runs.trilemma.map((o) => (o.memory.resident_total ?? 0))) / 1048576,
        weight_mib: runs.trilemma[0].weight_bytes / 1048576,
        prompt_tokens: pp ? {llama_cpp: runs.llama[0].prefill_tokens, trilemma: runs.trilemma[0].prompt_tokens.length} : undefined,
        runs: reps,
      };
      row.ratio = row.trilemma_tok_s / row.llama_cpp_tok_s;
      if (!pp) {
        const share = (tok_s) => (tok_s * runs.trilemma[0].weight_bytes) / (bandwidth * 1e9);
        row.trilemma_bandwidth_share = share(row.trilemma_tok_s);
        row.llama_cpp_bandwidth_share = share(row.llama_cpp_tok_s);
      }
      rows.push(row);
      const pct = (x) => `${(100 * x).toFixed(0)}%`;
      log(`${format.padEnd(5)} ${threads}t ${phase.padEnd(10)} llama.cpp ${row.llama_cpp_tok_s.toFixed(1).padStart(6)}  ` +
        `trilemma ${row.trilemma_tok_s.toFixed(1).padStart(6)}  ratio ${row.ratio.toFixed(2)}` +
        (pp ? `  (prompt tokens ${row.prompt_tokens.llama_cpp} / ${row.prompt_tokens.trilemma})` :
          `  BW ${pct(row.llama_cpp_bandwidth_share)} / ${pct(row.trilemma_bandwidth_share)}`) +
        `  peak RSS ${row.llama_cpp_peak_rss_mib.toFixed(0)} / ${row.trilemma_peak_rss_mib.toFixed(0)} MiB` +
        ` (trilemma's breakdown ${row.trilemma_memory_breakdown_mib.toFixed(0)})`);
    }
  }
}
if (args.json) console.log(JSON.stringify({host: {name: probe.name, isa: probe.isa, read_gbps: bandwidth}, model: args.model, rows}, null, 2));
