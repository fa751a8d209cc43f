// Real llama.cpp as a test peer (node-llama-cpp's prebuilt CPU binary, pinned in package.json):
//   node llama_cpp_peer.mjs MODEL.gguf STEPS [TEXT...]
// prints {"ids": greedy ids after BOS, "tokens": [llama.cpp's tokenization of each TEXT (no BOS)]}.
import {getLlama} from "node-llama-cpp";

const [, , modelPath, steps, ...texts] = process.argv;
if (!modelPath || !steps) {
  console.error("usage: node llama_cpp_peer.mjs MODEL.gguf STEPS [TEXT...]");
  process.exit(2);
}
// build "never": use the prebuilt binary or fail, never compile llama.cpp here.
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: Number(steps) + 8, threads: 2});
const sequence = context.getSequence();
const ids = [];
for await (const token of sequence.evaluate([model.tokens.bos], {temperature: 0})) {
  ids.push(token);
  if (ids.length >= Number(steps)) break;
}
console.log(JSON.stringify({ids, tokens: texts.map((text) => model.tokenize(text))}));
await context.dispose();
await model.dispose();
await llama.dispose();
