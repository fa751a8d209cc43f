// One measurement through real llama.cpp (node-llama-cpp's prebuilt CPU binary, installed and
// pinned by tests/interop's package.json and lockfile):
//   node llama_cpp_side.mjs MODEL.gguf THREADS PREFILL DEPTH DECODE TEXT
// Prefill: the first PREFILL tokens of TEXT (repeated as needed), timed as one evaluation.
// Decode: DEPTH tokens evaluated untimed, then DECODE greedy tokens timed one by one.
// Prints {"prefill_tokens", "prefill_tok_s", "decode_depth", "decode_tok_s", "peak_rss_bytes",
// "prompt_text"} on one line; prompt_text is llama.cpp's detokenization of the prefill tokens,
// so the other engine can be given the same prompt.
import {createRequire} from "node:module";
import {fileURLToPath, pathToFileURL} from "node:url";
import path from "node:path";

const [, , modelPath, threadsArg, prefillArg, depthArg, decodeArg, text] = process.argv;
if (!modelPath || !text) {
  console.error("usage: node llama_cpp_side.mjs MODEL.gguf THREADS PREFILL DEPTH DECODE TEXT");
  process.exit(2);
}
const [threads, prefill, depth, decode] = [threadsArg, prefillArg, depthArg, decodeArg].map(Number);

// The peer lives in tests/interop/node_modules (one pinned install for tests and benchmarks).
const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../tests/interop/package.json"));
const {getLlama} = await import(pathToFileURL(require.resolve("node-llama-cpp")).href);

// build "never": use the prebuilt binary or fail, never compile llama.cpp here.
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({
  contextSize: Math.max(prefill, depth + decode) + 16,
  batchSize: Math.max(prefill, depth, 1),
  threads: {ideal: threads, min: threads},
});
const sequence = context.getSequence();

const source = model.tokenize(text);
if (source.length === 0) throw new Error("TEXT tokenizes to nothing");
const tokens = (n) => {
  const out = [model.tokens.bos];
  while (out.length < n) out.push(...source.slice(0, n - out.length));
  return out;
};

const result = {prefill_tokens: prefill, decode_depth: depth, decode_tokens: decode};
if (prefill > 0) {
  const prompt = tokens(prefill);
  const start = process.hrtime.bigint();
  await sequence.evaluateWithoutGeneratingNewTokens(prompt);
  result.prefill_tok_s = prompt.length / (Number(process.hrtime.bigint() - start) / 1e9);
  result.prompt_text = model.detokenize(prompt.slice(1));
  await sequence.clearHistory();
}
if (decode > 0) {
  const history = tokens(Math.max(depth, 1));
  if (history.length > 1) await sequence.evaluateWithoutGeneratingNewTokens(history.slice(0, -1));
  let generated = 0, start = 0n;
  for await (const token of sequence.evaluate(history.slice(-1), {temperature: 0})) {
    // The first token ends the last history token's evaluation: the clock starts after it.
    if (generated === 0) start = process.hrtime.bigint();
    if (++generated > decode) break;
  }
  result.decode_tok_s = decode / (Number(process.hrtime.bigint() - start) / 1e9);
}
result.peak_rss_bytes = process.resourceUsage().maxRSS * 1024;
console.log(JSON.stringify(result));
await context.dispose();
await model.dispose();
await llama.dispose();
