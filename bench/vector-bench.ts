/**
 * Vector recall on a large store: the cost of the dense half of recall, not its quality (no
 * embedding model can be downloaded here, so quality cannot be measured from this machine).
 *
 * The store is bench:recall's: 100,000 turns of the LoCoMo dev conversations copied over, in ONE
 * subject (the worst case), plus 5,000 live facts. Vectors come from a stand-in embedder that
 * runs in this process: the sum of a fixed pseudo-random unit vector per analysed term, 384
 * dimensions (the size of the small sentence-embedding models), so texts that share words are
 * near one another and the nearest-neighbour search has real structure to work through.
 *
 * It measures, on each engine:
 * - `embedPending` throughput through the engine (reading pending rows, storing vectors and
 *   keeping the vector index), on the first turns, with the stand-in's own time left out;
 * - the rest stored in large batches through the store's own reads and writes (the rows
 *   `embedPending` writes, without its per-batch checks);
 * - recall with vectors (lexical + dense, fused) against lexical-only recall, same questions.
 * It reports; it never fails on a slow figure.
 *
 * With `--quality`, it runs `bench locomo` on PGlite instead, lexical only and then fused with
 * the stand-in's vectors: what fusing a dense ranking that knows nothing a lexical one does not
 * (the stand-in is a bag of words) costs or gains. It says nothing about a real model's gain.
 * Usage: node dist/bench/vector-bench.js [--turns N] [--queries Q] [--plain-queries Q] [--dims D]
 *   [--via-engine N] [--engines pglite,postgres] [--quality [--weights 1,0.25,0.05]]
 *   [--data ../shared/bench/locomo-dev.json] [--json]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { storeClient } from '../src/engine/test-access.js';
import type { Embedder, Engine } from '../src/index.js';
import { turnText, unitVector } from '../src/recall/vectors.js';
import { VectorSql } from '../src/store/vector-sql.js';
import { positiveInt } from './support/args.js';
import { BenchError } from './support/bench-error.js';
import { benchKinds, withBenchStore } from '../eval/bench-store.js';
import { loadLocomo } from '../eval/locomo-data.js';
import { formatRows } from '../eval/locomo-metrics.js';
import {
  LOCOMO_SUBJECT,
  seedLocomoStore,
  seedTurns,
  vacuumLocomoStore,
} from './support/locomo-store.js';
import {
  RANDOM_INDEXING_MODEL,
  randomIndexingEmbedder,
} from './support/random-indexing-embedder.js';
import { runLocomo, type RunLocomoOptions } from '../eval/run-locomo.js';
import { benchOwnerSigner } from './support/owner-chain.js';
import { runMain } from './support/run-main.js';
import { percentile } from './support/stats.js';

/**
 * Stores a vector for every turn and fact still without one, in large batches, with the store's
 * own reads and writes (what `embedPending` does, without its per-batch checks and index care).
 */
async function bulkVectors(engine: Engine, embedder: Embedder, batch = 2000): Promise<number> {
  const sql = new VectorSql(storeClient(engine), LOCOMO_SUBJECT, RANDOM_INDEXING_MODEL);
  const unit = async (texts: string[]): Promise<number[][]> =>
    (await embedder.embed(texts)).map((v, i) => unitVector(v, `text ${i}`));
  let stored = 0;
  let afterTurn: { session: string; seq: number } | undefined;
  for (;;) {
    const turns = await sql.pendingTurns(batch, afterTurn);
    if (turns.length === 0) break;
    afterTurn = turns[turns.length - 1];
    const vectors = await unit(turns.map((t) => turnText(t.speaker, t.content)));
    stored += await sql.addTurnVectors(turns.map((t, i) => ({ ...t, vector: vectors[i] ?? [] })));
  }
  let afterFact: string | undefined;
  for (;;) {
    const facts = await sql.pendingFacts(batch, afterFact);
    if (facts.length === 0) break;
    afterFact = facts[facts.length - 1]?.id;
    const vectors = await unit(facts.map((f) => f.text));
    stored += await sql.addFactVectors(
      facts.map((f, i) => ({ id: f.id, vector: vectors[i] ?? [] })),
    );
  }
  return stored;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      turns: { type: 'string', default: '100000' },
      queries: { type: 'string', default: '200' },
      // plain SQL compares every vector: seconds per query on a large store
      'plain-queries': { type: 'string', default: '10' },
      warmup: { type: 'string', default: '20' },
      dims: { type: 'string', default: '384' },
      'via-engine': { type: 'string', default: '2000' },
      engines: { type: 'string', default: 'pglite,postgres' },
      data: { type: 'string', default: '../shared/bench/locomo-dev.json' },
      json: { type: 'boolean', default: false },
      quality: { type: 'boolean', default: false },
      weights: { type: 'string', default: '1,0.25,0.05' },
    },
  });
  const dims = positiveInt('dims', values.dims, 1);
  if (values.quality) {
    const convs = loadLocomo(values.data);
    const runs: [string, RunLocomoOptions][] = [
      ['lexical only', {}],
      ...values.weights
        .split(',')
        .map(Number)
        .map((w): [string, RunLocomoOptions] => [
          `fused with the stand-in's vectors, vectorWeight ${w}`,
          { embedder: randomIndexingEmbedder(dims), params: { vectorWeight: w } },
        ]),
    ];
    for (const [name, options] of runs) {
      const r = await runLocomo('pglite', convs, () => undefined, options);
      console.log(`== ${name}`);
      console.log(formatRows(r.metrics));
    }
    return;
  }
  const queries = positiveInt('queries', values.queries, 1);
  const plainQueries = positiveInt('plain-queries', values['plain-queries'], 1);
  const warmupCount = positiveInt('warmup', values.warmup, 0);
  const viaEngine = positiveInt('via-engine', values['via-engine'], 1);
  const convs = loadLocomo(values.data);
  const questions = convs.flatMap((c) => c.questions.map((q) => q.question));
  const turns = seedTurns(convs, positiveInt('turns', values.turns, 1));
  const reports: Record<string, unknown>[] = [];
  for (const kind of await benchKinds(values.engines)) {
    const embedder = randomIndexingEmbedder(dims);
    reports.push(
      await withBenchStore(
        kind,
        'ml_vectors',
        async (engine) => {
          const sql = storeClient(engine);
          const me = engine.subject(LOCOMO_SUBJECT);
          const math = sql.capabilities.vectorType ? 'pgvector' : 'plain SQL';
          // signed, so the seeded facts are live memory (reads withhold unsigned ones)
          await seedLocomoStore(engine, turns, benchOwnerSigner());
          await vacuumLocomoStore(engine);
          // through the engine: the first turns, as a host would embed them
          const t0 = performance.now();
          const before = embedder.ms;
          const first = await me.vectors.embedPending({ limit: viaEngine });
          const engineMs = performance.now() - t0 - (embedder.ms - before);
          const perSecond = Math.round(((first.turns + first.facts) / engineMs) * 1000);
          // the rest in bulk
          const t1 = performance.now();
          const bulk = await bulkVectors(engine, embedder);
          const bulkMs = performance.now() - t1;
          const left = await me.vectors.embedPending({ limit: 10 });
          if (left.turns + left.facts !== 0 || left.remaining) {
            throw new BenchError(`vectors left unstored: ${JSON.stringify(left)}`);
          }
          // what follows a burst of vectors: autovacuum on PostgreSQL; on PGlite the ANALYZE
          // embedPending itself runs after storing (the bulk rows bypassed it)
          await sql.exec(
            kind === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE turn_vectors, fact_vectors',
          );
          const time = async (vectors: boolean): Promise<number[]> => {
            const n = vectors && math === 'plain SQL' ? plainQueries : queries;
            const warmup = Math.min(warmupCount, n);
            for (let i = 0; i < warmup; i++) {
              await me.recall.search(questions[(i * 7) % questions.length] ?? 'hello', { vectors });
            }
            const ms: number[] = [];
            for (let i = 0; i < n; i++) {
              const q = questions[i % questions.length] ?? 'hello';
              const start = performance.now();
              await me.recall.search(q, { vectors });
              ms.push(performance.now() - start);
            }
            return ms;
          };
          const lexical = await time(false);
          const dense = await time(true);
          const r = {
            engine: kind,
            math,
            turns: turns.length,
            dims,
            viaEngine: first.turns + first.facts,
            embedPendingPerSecond: perSecond,
            bulkVectors: bulk,
            bulkMs: Math.round(bulkMs),
            lexicalP50: round(percentile(lexical, 0.5)),
            lexicalP95: round(percentile(lexical, 0.95)),
            vectorP50: round(percentile(dense, 0.5)),
            vectorP95: round(percentile(dense, 0.95)),
            queries: dense.length,
          };
          if (!values.json) {
            console.log(
              `${kind} (${math}), ${r.turns} turns, ${dims} dimensions: embedPending stored ` +
                `${r.viaEngine} vectors at ${perSecond}/s (embedding time left out); ` +
                `${bulk} more in bulk in ${r.bulkMs} ms.\n  ${r.queries} recalls: lexical p50 ` +
                `${r.lexicalP50} / p95 ${r.lexicalP95} ms; with vectors p50 ${r.vectorP50} / ` +
                `p95 ${r.vectorP95} ms`,
            );
          }
          return r;
        },
        { embedder },
      ),
    );
  }
  if (values.json) console.log(JSON.stringify({ reports }));
}

const round = (x: number): number => Math.round(x * 10) / 10;

runMain('vector-bench', main);
