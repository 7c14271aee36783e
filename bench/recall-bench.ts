/**
 * Recall latency on a 100,000-turn store (issue 6: p95 at most 20 ms on both engines). The
 * store holds ONE subject (recall filters by subject, so one large subject is the worst case)
 * whose turns are the LoCoMo dev conversations copied over and over, each copy in sessions of
 * its own, so term statistics look like real conversation at scale (every rare word recurs once
 * per copy, speaker names are in a quarter of all turns). Every 10th turn was proposed as a fact
 * and decided by the owner in a signed chain (bench/support/locomo-chain.ts): 10,000 decisions,
 * 5,000 facts live; the engine's full `owner.verifyChain` must say ok before anything is timed,
 * and every recall verifies the facts it shows against that chain (src/gate/trust-verifier.ts).
 *
 * Seeding goes through set-based SQL, not 100,000 engine calls: turns are inserted with the
 * engine's own analysis (`analyze`) and the index is then built from them in bulk, with exactly
 * the definitions the write trigger applies; the bench checks that every term's df and sdf and
 * every session's length agree with the postings before it times anything. PostgreSQL gets the
 * VACUUM ANALYZE autovacuum would run; PGlite gets the VACUUM ANALYZE of the recall tables that
 * the engine itself runs there every 2,048 turns of a subject (PGlite has no autovacuum).
 *
 * Then each query is a LoCoMo dev question through `recall.search` with default options (turns
 * and facts, k 10). A second layout stores the same 100,000 turns with each conversation copy
 * as its own subject (as `bench locomo` does), and asks each question of a copy of its own
 * conversation. A third layout stores them as long conversations: the copies' sessions in
 * order, a new subject begun at the first session boundary after 1,000 turns, each question asked
 * of the subject its conversation's copy begins in (issue 39: p95 at most 20 ms on 1,000-turn
 * conversations). The verification cost (the first trust view of a fresh engine, a warm one per
 * read, and how the one-off part grows with the chain) is printed on a line of its own. It
 * reports; it never fails on a slow figure.
 * Usage: node dist/bench/recall-bench.js [--turns N] [--queries Q] [--warmup W]
 *   [--trust-reads T] [--engines pglite,postgres]
 *   [--layouts one-subject,per-conversation,long-conversations]
 *   [--data ../shared/bench/locomo-dev.json[,FILE…]] [--json]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { SubjectHandle } from '../src/index.js';
import { positiveInt } from './support/args.js';
import { BenchError } from './support/bench-error.js';
import { benchKinds, withBenchStore } from '../eval/bench-store.js';
import { loadLocomoFiles } from '../eval/locomo-data.js';
import {
  checkLocomoStore,
  firstSubjects,
  LAYOUTS,
  seedLocomoStore,
  seedTurns,
  vacuumLocomoStore,
  type Layout,
} from './support/locomo-store.js';
import { benchAnchor, benchOwnerSigner } from './support/owner-chain.js';
import { progress } from './support/progress.js';
import { runMain } from './support/run-main.js';
import { percentile } from './support/stats.js';
import { measureTrustCost, trustCostLine, trustPartLines } from './support/trust-cost.js';

const TARGET_P95_MS = 20;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      turns: { type: 'string', default: '100000' },
      queries: { type: 'string', default: '400' },
      warmup: { type: 'string', default: '40' },
      'trust-reads': { type: 'string', default: '200' },
      engines: { type: 'string', default: 'pglite,postgres' },
      layouts: { type: 'string', default: LAYOUTS.join(',') },
      data: { type: 'string', default: '../shared/bench/locomo-dev.json' },
      json: { type: 'boolean', default: false },
    },
  });
  const total = positiveInt('turns', values.turns, 1);
  const queries = positiveInt('queries', values.queries, 1);
  const warmup = positiveInt('warmup', values.warmup, 0);
  const trustReads = positiveInt('trust-reads', values['trust-reads'], 1);
  const convs = loadLocomoFiles(values.data.split(','));
  // each question with the conversation it belongs to
  const questions = convs.flatMap((c) => c.questions.map((q) => ({ conv: c.id, q: q.question })));
  const layouts = values.layouts.split(',').map((l) => {
    if (!LAYOUTS.includes(l as Layout)) {
      throw new BenchError(`unknown layout "${l}" (${LAYOUTS.join(', ')})`);
    }
    return l as Layout;
  });
  const kinds = await benchKinds(values.engines);
  const signer = benchOwnerSigner();
  const reports: Record<string, unknown>[] = [];
  const costLines: string[] = [];
  for (const layout of layouts) {
    const turns = seedTurns(convs, total, layout);
    const subjectOfCopy = firstSubjects(turns);
    const copies = Math.max(
      1,
      Math.floor(
        total / convs.reduce((n, c) => n + c.sessions.reduce((m, s) => m + s.turns.length, 0), 0),
      ),
    );
    for (const kind of kinds) {
      reports.push(
        await withBenchStore(
          kind,
          'ml_recall',
          async (engine) => {
            progress(`${kind}, ${layout}: seeding…`);
            const t0 = performance.now();
            const chains = await seedLocomoStore(engine, turns, signer);
            if (chains === null) throw new BenchError('the store was seeded with no chain');
            await vacuumLocomoStore(engine);
            const facts = await checkLocomoStore(engine, turns.length, chains.liveFacts);
            const seedMs = performance.now() - t0;
            const handles = new Map<string, SubjectHandle>();
            const handle = (subject: string): SubjectHandle => {
              let me = handles.get(subject);
              if (me === undefined) handles.set(subject, (me = engine.subject(subject)));
              return me;
            };
            const ask = (i: number): Promise<unknown> => {
              const item = questions[i % questions.length] ?? { conv: '', q: 'hello' };
              // the question goes to the subject its conversation's copy begins in (per
              // conversation: a full copy of its own conversation)
              const subject = subjectOfCopy.get(`c${i % copies}-${item.conv}`);
              if (subject === undefined)
                throw new BenchError(`no copy ${i % copies} of ${item.conv}`);
              return handle(subject).recall.search(item.q);
            };
            for (let i = 0; i < warmup; i++) await ask(i * 7);
            const ms: number[] = [];
            for (let i = 0; i < queries; i++) {
              const start = performance.now();
              await ask(i);
              ms.push(performance.now() - start);
            }
            const subjects = new Set(turns.map((t) => t.subject)).size;
            // the verification cost on the longest chain (the one subject, or one conversation copy)
            progress(`${kind}, ${layout}: measuring the verification cost…`);
            const trust = await measureTrustCost(
              engine,
              chains.longest.subject,
              chains.longest.links,
              trustReads,
            );
            const r = {
              engine: kind,
              layout,
              turns: turns.length,
              subjects,
              facts,
              chains: {
                links: chains.links,
                approvals: chains.approvals,
                rejects: chains.rejects,
                longest: chains.longest,
                signMs: Math.round(chains.signMs),
                verifyChainMs: Math.round(chains.verifyMs),
              },
              trust,
              queries: ms.length,
              seedMs: Math.round(seedMs),
              p50: round(percentile(ms, 0.5)),
              p95: round(percentile(ms, 0.95)),
              max: round(Math.max(...ms)),
              targetP95: TARGET_P95_MS,
            };
            if (!values.json) {
              console.log(
                `${kind}, ${layout}: ${r.turns} turns in ${subjects} subject(s), ${r.facts} live facts, ` +
                  `${chains.links} signed decisions (${chains.approvals} approvals, ${chains.rejects} rejects; ` +
                  `longest chain ${chains.longest.links}, owner.verifyChain ok for every subject) ` +
                  `(seeded in ${r.seedMs} ms); ${r.queries} recalls: p50 ${r.p50} ms, ` +
                  `p95 ${r.p95} ms, max ${r.max} ms (target p95 ≤ ${TARGET_P95_MS} ms: ` +
                  `${r.p95 <= TARGET_P95_MS ? 'met' : 'NOT met'})`,
              );
              console.log(`  one warm trust view, by part, each alone (p50 ms, p95 ms):`);
              for (const line of trustPartLines(trust)) console.log(line);
              costLines.push(trustCostLine(`${kind}, ${layout}`, trust));
            }
            return r;
          },
          { anchor: benchAnchor(signer) },
        ),
      );
    }
  }
  if (values.json) console.log(JSON.stringify({ reports }));
  else {
    console.log('');
    for (const line of costLines) console.log(line);
  }
}

const round = (x: number): number => Math.round(x * 10) / 10;

runMain('recall-bench', main);
