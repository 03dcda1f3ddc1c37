// Search speed (issue 5) at 10,000 and 100,000 trails:
//   - the raw parts, in-process, same data: one query embedding; KNN (the in-memory binary pass
//     over sqlite-vec's quantized codes + float re-score, the production path), sqlite-vec's vec0
//     KNN and exact float KNN for comparison; FTS5 query;
//   - the whole search in-process (SearchService.search) and over HTTP against a separate colony
//     process: one client p50/p99, and 16 concurrent clients (wrk -t2 -c16) throughput;
//   - colony RSS; recall@10 of the quantized pass against exact KNN.
// Trails are synthesized from real error strings and written through the service in-process
// (publish + worker drain in big chunks); the colony process then starts on that data dir.
// Targets: p50 < 15 ms at 100k, whole search < 1.5 x the sum of its raw parts, RSS < 400 MB.
// For the second, the whole is the in-process search and the parts are measured interleaved with
// it on the same queries (each query's parts and its whole one after the other, the order
// alternating), the fingerprint stage (the query's fingerprint and its lookup, a search's first
// retriever) among them. Sessions 1-11 divided the HTTP p50 of a second process by parts timed
// each alone in a loop of its own, warm as a search's parts never are, without the fingerprint
// stage; that ratio is still printed (bench/RESULTS.md, "Session 12: what a search costs beyond
// its parts").
// Run: node_modules/.bin/bun bench/search-speed.bench.ts [--quick] [--sizes 10000,100000]
import { currentAndOlderFingerprints } from "../src/core/fingerprint";
import { lexicalIndexTokens } from "../src/core/lexical";
import { CANDIDATES_PER_RETRIEVER } from "../src/service/search";
import { firstPassSize, type SqliteVectorStore } from "../src/store/sqlite/vectors";
import { loadSharedEval } from "../test/support/paths";
import { benchDir, inProcessColony, removeDir, seedTrails, spawnColony } from "./lib/colony";
import { synthesizedQueries, synthesizedTrails } from "./lib/corpus";
import { f1, f2, f3, Figures, flag, log, QUICK, REPO_DIR, rng, shuffle, summarize, verdict } from "./lib/report";
import { cyclingScript, hasWrk, runWrk } from "./lib/wrk";

const SIZES = (flag("--sizes") ?? (QUICK ? "1000,5000" : "10000,100000")).split(",").map(Number);
// Fewer samples at the big size: each search there costs a few hundred ms (see RESULTS.md).
const ONE_CLIENT_QUERIES = (size: number) => (QUICK ? 100 : size >= 50_000 ? 200 : 400);
const RAW_QUERIES = (size: number) => (QUICK ? 100 : size >= 50_000 ? 150 : 300);
const RECALL_QUERIES = QUICK ? 50 : 200;
const WRK_SECONDS = QUICK ? 3 : 10;

const figures = new Figures("search-speed");
const { cases, negatives } = loadSharedEval();
const evalQueries = [...cases.flatMap((c) => [c.paraphrase, c.related].filter((q): q is string => !!q)), ...negatives];
const queries = shuffle([...evalQueries, ...synthesizedQueries(REPO_DIR, 400)], rng(9));
log(`query pool: ${queries.length} (${evalQueries.length} eval paraphrase/related/negative, the rest synthesized from error strings)`);

const dir = benchDir();
const perSize: Record<string, unknown>[] = [];
try {
  let seededSoFar = 0;
  let seedS = 0;
  for (const size of SIZES) {
    // 1. Seed up to `size` trails in-process, then close (the WAL is checkpointed into the file)
    //    and reopen, so the measurements below see the same state as the colony process will.
    const seedColony = await inProcessColony(dir);
    let batch = synthesizedTrails(REPO_DIR, size - seededSoFar, 7, seededSoFar);
    const seedCount = batch.length;
    const seeding = await seedTrails(seedColony, batch, {
      chunk: 5000,
      onProgress: (n) => {
        if ((seededSoFar + n) % 20_000 === 0) log(`  seeded ${seededSoFar + n}`);
      },
    });
    seedS += seeding.totalS;
    seededSoFar = size;
    await seedColony.stop();
    batch = [];
    Bun.gc(true);
    const colony = await inProcessColony(dir);
    const { store, vectors, embedder, db } = colony.subsystems;
    const indexed = db!.query<{ n: number }, []>("SELECT count(*) AS n FROM trails WHERE status = 'indexed'").get()!.n;
    log("");
    log(
      `== ${size} trails (${indexed} indexed): seeding ${seedCount} took ${f1(seeding.totalS)} s ` +
        `(${f1(seedCount / seeding.totalS)} trails/s; publish ${f1(seeding.publishS)} s, enrichment ${f1(seeding.drainS)} s)`,
    );

    // 2. Raw parts, in-process, one at a time, on the same queries.
    const caller = { address: "127.0.0.1", client: "anon-loopback", agent: "bench-speed", agentDeclared: true };
    const qs = queries.slice(0, RAW_QUERIES(size));
    const embedded = await embedder!.embed(qs.slice(0, 16)); // warm up
    void embedded;
    const embedMs: number[] = [];
    const vecs: Float32Array[] = [];
    for (const q of qs) {
      const t0 = performance.now();
      const [v] = await embedder!.embed([q]);
      embedMs.push(performance.now() - t0);
      vecs.push(v!);
    }
    const time = async (fn: (i: number) => unknown) => {
      const ms: number[] = [];
      for (let i = 0; i < qs.length; i++) {
        const t0 = performance.now();
        await fn(i);
        ms.push(performance.now() - t0);
      }
      return ms;
    };
    const k = CANDIDATES_PER_RETRIEVER;
    const quantMs = await time((i) => vectors!.search(vecs[i]!, k));
    const exactMs = await time((i) => vectors!.searchExact(vecs[i]!, k));
    // The production KNN split into its two steps (the in-memory binary pass, then the float
    // re-score), beside sqlite-vec's own vec0 KNN over the same codes and candidate count.
    const sqliteVectors = vectors as SqliteVectorStore;
    const candidates: number[][] = [];
    const bitsMs = await time((i) => {
      candidates[i] = sqliteVectors.firstPass(vecs[i]!, k);
    });
    const vec0Knn = db!.query<{ rowid: number }, [Float32Array, number]>(
      "SELECT rowid FROM vec_bits WHERE bits MATCH vec_quantize_binary(?) AND k = ?",
    );
    const vec0Ms = await time((i) => {
      vec0Knn.all(vecs[i]!, firstPassSize(k));
    });
    const rescoreMs = await time((i) => vectors!.similarities(vecs[i]!, candidates[i]!));
    const ftsMs = await time((i) => store!.lexical.search(lexicalIndexTokens(qs[i]!), k));
    const wholeMs: number[] = [];
    for (const q of qs) {
      const t0 = performance.now();
      await colony.service.search.search({ query: q, limit: 5 }, caller);
      wholeMs.push(performance.now() - t0);
    }
    // The same parts interleaved with whole searches (see the header): per query, the whole and its
    // parts one after the other, the order alternating so neither runs on the other's warm pages.
    const stageMs: number[] = [];
    const inEmbedMs: number[] = [];
    const inKnnMs: number[] = [];
    const inFtsMs: number[] = [];
    const inWholeMs: number[] = [];
    const trails = colony.service.trails;
    const partsOf = async (q: string) => {
      let t0 = performance.now();
      // The fingerprint stage as SearchService.run does it (no older versions in a fresh colony).
      const { current: fp, older } = currentAndOlderFingerprints(q, trails.olderVersionsInStore());
      await trails.fingerprintMatches([fp, ...older], undefined, 5);
      stageMs.push(performance.now() - t0);
      t0 = performance.now();
      const [v] = await embedder!.embed([q]);
      inEmbedMs.push(performance.now() - t0);
      t0 = performance.now();
      await vectors!.search(v!, k);
      inKnnMs.push(performance.now() - t0);
      t0 = performance.now();
      await store!.lexical.search(lexicalIndexTokens(q), k);
      inFtsMs.push(performance.now() - t0);
    };
    const wholeOf = async (q: string) => {
      const t0 = performance.now();
      await colony.service.search.search({ query: q, limit: 5 }, caller);
      inWholeMs.push(performance.now() - t0);
    };
    for (const [i, q] of qs.entries()) {
      if (i % 2 === 0) {
        await partsOf(q);
        await wholeOf(q);
      } else {
        await wholeOf(q);
        await partsOf(q);
      }
    }
    const parts = {
      embed: summarize(embedMs),
      vector_quantized_rescore: summarize(quantMs),
      vector_binary_pass_only: summarize(bitsMs),
      vector_vec0_knn_same_k: summarize(vec0Ms),
      vector_rescore_only: summarize(rescoreMs),
      vector_exact: summarize(exactMs),
      fts5: summarize(ftsMs),
      whole_in_process: summarize(wholeMs),
      interleaved_fingerprint_stage: summarize(stageMs),
      interleaved_embed: summarize(inEmbedMs),
      interleaved_vector_quantized_rescore: summarize(inKnnMs),
      interleaved_fts5: summarize(inFtsMs),
      interleaved_whole_in_process: summarize(inWholeMs),
    };
    const retrieversP50 = parts.interleaved_embed.p50 + parts.interleaved_vector_quantized_rescore.p50 + parts.interleaved_fts5.p50;
    const interleavedP50 = retrieversP50 + parts.interleaved_fingerprint_stage.p50;
    const sumP50 = parts.embed.p50 + parts.vector_quantized_rescore.p50 + parts.fts5.p50;
    // p50(a + b) is not p50(a) + p50(b) for skewed timings: also the p50 of each query's own sum.
    const perQuerySumP50 = summarize(qs.map((_, i) => embedMs[i]! + quantMs[i]! + ftsMs[i]!)).p50;
    log(`raw parts, in-process, ${qs.length} queries (k = ${k} per retriever), p50 / p99 ms:`);
    log(`  query embedding                       ${f2(parts.embed.p50)} / ${f2(parts.embed.p99)}`);
    log(`  KNN, binary pass + float re-score     ${f2(parts.vector_quantized_rescore.p50)} / ${f2(parts.vector_quantized_rescore.p99)}`);
    log(
      `    of which binary pass (k = ${firstPassSize(k)})      ${f2(parts.vector_binary_pass_only.p50)} / ${f2(parts.vector_binary_pass_only.p99)}`,
    );
    log(
      `    (sqlite-vec vec0 KNN, same codes and k: ${f2(parts.vector_vec0_knn_same_k.p50)} / ${f2(parts.vector_vec0_knn_same_k.p99)}; not used)`,
    );
    log(`    of which float re-score (rowid IN)  ${f2(parts.vector_rescore_only.p50)} / ${f2(parts.vector_rescore_only.p99)}`);
    log(`  KNN, exact float (comparison)         ${f2(parts.vector_exact.p50)} / ${f2(parts.vector_exact.p99)}`);
    log(`  FTS5 query                            ${f2(parts.fts5.p50)} / ${f2(parts.fts5.p99)}`);
    log(`  sum of the production parts (p50)     ${f2(sumP50)}   (p50 of each query's own sum: ${f2(perQuerySumP50)})`);
    log(`  whole search, in-process              ${f2(parts.whole_in_process.p50)} / ${f2(parts.whole_in_process.p99)}`);
    log(`the same, interleaved with whole searches of each query (the target's parts), p50 / p99 ms:`);
    log(
      `  fingerprint stage (fingerprint + lookup) ${f2(parts.interleaved_fingerprint_stage.p50)} / ${f2(parts.interleaved_fingerprint_stage.p99)}`,
    );
    log(`  query embedding                       ${f2(parts.interleaved_embed.p50)} / ${f2(parts.interleaved_embed.p99)}`);
    log(
      `  KNN, binary pass + float re-score     ${f2(parts.interleaved_vector_quantized_rescore.p50)} / ${f2(parts.interleaved_vector_quantized_rescore.p99)}`,
    );
    log(`  FTS5 query                            ${f2(parts.interleaved_fts5.p50)} / ${f2(parts.interleaved_fts5.p99)}`);
    log(`  sum of the parts (p50)                ${f2(interleavedP50)}   (without the fingerprint stage: ${f2(retrieversP50)})`);
    log(
      `  whole search, in-process              ${f2(parts.interleaved_whole_in_process.p50)} / ${f2(parts.interleaved_whole_in_process.p99)}` +
        `   whole / parts ${f2(parts.interleaved_whole_in_process.p50 / interleavedP50)}` +
        ` (${f2(parts.interleaved_whole_in_process.p50 - interleavedP50)} ms beyond the parts;` +
        ` without the fingerprint stage: ${f2(parts.interleaved_whole_in_process.p50 / retrieversP50)})`,
    );

    // 3. Recall of the quantized pass against exact KNN (top 10), random queries.
    const rq = shuffle(queries, rng(size)).slice(0, RECALL_QUERIES);
    const rv = await embedder!.embed(rq);
    let overlap = 0;
    let top1 = 0;
    for (const v of rv) {
      const exact = (await vectors!.searchExact(v, 10)).map((h) => h.id);
      const quant = (await vectors!.search(v, 10)).map((h) => h.id);
      const set = new Set(exact);
      overlap += quant.filter((id) => set.has(id)).length / Math.max(1, exact.length);
      if (quant[0] === exact[0]) top1++;
    }
    const recall10 = overlap / rv.length;
    log(
      `quantized vs exact KNN over ${rv.length} queries: recall@10 ${f3(recall10)}, same top-1 ${f3(top1 / rv.length)} (k = 10: ${firstPassSize(10)} binary candidates re-scored)`,
    );
    await colony.stop();

    // 4. Over HTTP, against a separate colony process.
    const started = performance.now();
    const proc = await spawnColony(dir);
    const startMs = performance.now() - started; // includes loading the binary codes into memory
    log(`colony process start -> /readyz 200 at ${indexed} trails: ${f1(startMs)} ms (polled every 50 ms)`);
    const row: Record<string, unknown> = {
      size,
      indexed,
      seeding,
      parts,
      sum_parts_p50: sumP50,
      per_query_sum_p50: perQuerySumP50,
      interleaved_parts_p50: interleavedP50,
      interleaved_retrievers_p50: retrieversP50,
      in_process_whole_over_parts: parts.interleaved_whole_in_process.p50 / interleavedP50,
      recall_at_10: recall10,
      same_top1: top1 / rv.length,
      start_ms: startMs,
    };
    try {
      const body = (q: string) => JSON.stringify({ query: q, limit: 5 });
      const hq = queries.slice(0, ONE_CLIENT_QUERIES(size));
      // One pass over the measured queries first: the in-process parts above ran on pages and code
      // these queries had warmed, and so does this process's search then.
      for (const q of hq) await (await post(proc.url, body(q))).arrayBuffer();
      const oneMs: number[] = [];
      for (const q of hq) {
        const t0 = performance.now();
        const res = await post(proc.url, body(q));
        await res.arrayBuffer();
        oneMs.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`search answered ${res.status}`);
      }
      const one = summarize(oneMs);
      const ratio = one.p50 / interleavedP50;
      log(
        `HTTP, one client, ${one.n} searches: p50 ${f2(one.p50)} ms, p99 ${f2(one.p99)} ms; p50 / sum of the parts = ${f2(ratio)}` +
          ` (the HTTP layer and client: ${f2(one.p50 - parts.interleaved_whole_in_process.p50)} ms over the whole in-process;` +
          ` sessions 1-11's ratio, / warm-loop parts without the fingerprint stage: ${f2(one.p50 / sumP50)})`,
      );
      row.http_one_client = one;
      row.whole_over_parts = one.p50 / sumP50; // sessions 1-11's ratio, as they recorded it
      row.http_over_interleaved_parts = ratio;
      row.http_share_ms = one.p50 - parts.interleaved_whole_in_process.p50;
      row.whole_over_per_query_parts = one.p50 / perQuerySumP50;
      if (hasWrk()) {
        const script = cyclingScript(queries.map((q) => ({ method: "POST", path: "/v1/search", body: body(q) })));
        const w = await runWrk({ url: proc.url, threads: 2, connections: 16, seconds: WRK_SECONDS, script });
        log(
          `HTTP, 16 concurrent clients (wrk -t2 -c16 -d${WRK_SECONDS}s): ${f1(w.requestsPerSec)} searches/s, p50 ${f2(w.p50Ms)} ms, p99 ${f2(w.p99Ms)} ms${w.non2xx ? `, non-2xx ${w.non2xx}` : ""}`,
        );
        row.http_16_clients = w;
      }
      const rss = await proc.rss();
      log(`colony RSS after the load: ${f1(rss / 1e6)} MB`);
      row.colony_rss_mb = rss / 1e6;
      if (size >= 100_000 || size === SIZES[SIZES.length - 1]) {
        const checks = {
          p50_under_15ms: one.p50 < 15,
          // In-process against in-process parts: over HTTP the whole also pays the transport and a
          // second process's wake-ups, which on a shared machine vary more than the search (the
          // HTTP line above gives that share).
          whole_under_1_5x_parts: parts.interleaved_whole_in_process.p50 / interleavedP50 < 1.5,
          rss_under_400mb: rss / 1e6 < 400,
        };
        log(
          `targets at ${size}: p50 < 15 ms: ${verdict(checks.p50_under_15ms)}; whole < 1.5 x parts (in-process): ${verdict(checks.whole_under_1_5x_parts)}; ` +
            `RSS < 400 MB: ${verdict(checks.rss_under_400mb)}`,
        );
        row.targets = checks;
      }
    } finally {
      await proc.stop();
    }
    perSize.push(row);
  }
  log(`seeding in total: ${f1(seedS)} s for ${seededSoFar} trails`);
  figures.set("sizes", perSize);
  figures.set("seed_total_s", seedS);
} finally {
  removeDir(dir);
}
figures.write();

function post(url: string, body: string) {
  return fetch(`${url}/v1/search`, {
    method: "POST",
    headers: { "content-type": "application/json", "X-Colony-Agent": "bench-search" },
    body,
  });
}
