// What writing an MCP HTTP answer with its invisible characters escaped costs (session 17, mcp17):
// escapeHiddenInJson over a colony_search answer of 3 trails (text and structuredContent).
// `node_modules/.bin/bun bench/mcp-escape.bench.ts`
import { escapeHiddenInJson } from "../src/core/hidden-json";
import { sampleTrail } from "../test/support/trails";
// A colony_search answer's shape: 3 trails in the text and again as structuredContent.
const trails = [1, 2, 3].map((i) => ({
  ...sampleTrail({ error: `ModuleNotFoundError: No module named 'yaml' ${i}` }),
  trail_id: crypto.randomUUID(),
}));
const answer = JSON.stringify({
  result: { content: [{ type: "text", text: JSON.stringify({ trails }) }], structuredContent: { trails } },
  jsonrpc: "2.0",
  id: 1,
});
console.log("bytes", answer.length);
for (let r = 0; r < 3; r++) {
  const t = performance.now();
  for (let i = 0; i < 20000; i++) escapeHiddenInJson(answer);
  console.log("µs per answer", ((performance.now() - t) * 1000) / 20000);
}
