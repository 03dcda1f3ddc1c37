// The cost of the risk rules' second and third readings (session 19): a command whose text holds one
// character the typed reading folds (a fullwidth letter) or one `${IFS}` the spaced reading restores is
// read again from its first top-level pipeline that differs, with the state the reading before it had
// there. Prints CPU ms per analyzeCommand (best of 5 rounds of 10) for 19 KB of distinct `make` lines,
// as written and with the character at the end and at the start (a start still reads it all again).
// Run: node_modules/.bin/bun bench/risk-reread.bench.ts [path/to/other/src/core/risk.ts]
const riskModule = process.argv[2] ?? "../src/core/risk.ts";
const { analyzeCommand } = (await import(riskModule)) as typeof import("../src/core/risk.ts");
let base = "";
for (let i = 0; base.length < 19000; i++) base += `make target${i} && cp out${i}.bin dist/\n`;
const variants: Record<string, string> = {
  ascii: base,
  "é at the end (unchanged by folding)": `${base}echo é`,
  "fullwidth ｘ at the end": `${base}echo ｘ`,
  "${IFS} at the end": `${base}echo\${IFS}x`,
  "fullwidth ｘ at the start": `echo ｘ\n${base}`,
};
const best: Record<string, number> = {};
for (let round = 0; round < 6; round++)
  for (const [name, text] of Object.entries(variants)) {
    const t0 = process.cpuUsage();
    for (let n = 0; n < 10; n++) analyzeCommand(text);
    const used = process.cpuUsage(t0);
    const ms = (used.user + used.system) / 1000 / 10;
    if (round > 0) best[name] = Math.min(best[name] ?? Number.POSITIVE_INFINITY, ms); // round 0 warms the JIT
  }
for (const [name, ms] of Object.entries(best)) console.log(`${ms.toFixed(1).padStart(6)} ms  ${name}`);
export {};
