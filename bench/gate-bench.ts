/**
 * Gate benchmark: how many proposals the write gate judges per second, twice. First the pure rules
 * (`checkProposal` over proposals whose GateContexts were looked up in advance), then end to end
 * through a subject handle's `gate.propose` on each store, where every proposal costs its lookups
 * and its write (the fact row, or the dropped-log row). The workload is seed 001's night, at scale:
 * a 50-turn session (user and assistant) and batches of 100 reflection items, about a third of
 * which pass; the rest are dropped by the rules the seed's twelve lines and their neighbours trip
 * (self-cited, misquoted, uncorrected "corrections", "failed to recall" a topic nobody raised,
 * re-asserted retracted claims, …). The verdict mix is checked item by item against what each item
 * was built to hit, and the pure and store runs must agree on it, so neither figure can come from a
 * degenerate path. It reports; it never fails on a slow figure.
 * Usage: node dist/bench/gate-bench.js [--batches N] [--rounds R] [--pure-rounds R]
 * [--pure-warmup W] [--engines pglite,postgres] [--json]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { resetTextMemo } from '../src/domain/text/memo.js';
import type { Engine, Proposal, ProposeResult } from '../src/index.js';
import { checkProposal } from '../src/rules.js';
import { BATCH_SIZE, MIX, makeBatch, type BenchItem } from './fixtures/gate-batches.js';
import { prepareContexts, type PureItem } from './fixtures/gate-contexts.js';
import { buildConversation, type Conversation } from './fixtures/gate-conversation.js';
import { positiveInt } from './support/args.js';
import { BenchError } from './support/bench-error.js';
import { BENCH_KINDS, benchKinds, withBenchStore, type BenchKind } from '../eval/bench-store.js';
import { progress } from './support/progress.js';
import { runMain } from './support/run-main.js';
import { median, percentile } from './support/stats.js';

/** Proposals per second the pure rules should sustain (issue 3). */
const TARGET = 20_000;
const SUBJECT = 'owner';
const SESSION = 'bench-night';

// ---------------------------------------------------------------------------------------------
// Pure rules: checkProposal over contexts looked up in advance.

interface PureResult {
  proposals: number;
  rounds: number;
  warmupRounds: number;
  proposalsPerSec: number;
  roundRates: number[];
  perProposalMedianUs: number;
  perProposalP95Us: number;
  /** Median time per item kind, from individually timed calls. */
  byKindUs: Record<string, number>;
}

function runPure(items: readonly PureItem[], rounds: number, warmup: number): PureResult {
  let sink = 0;
  // Every round starts with the text memo cold: within a round, proposals citing the same turns
  // share normalizations as they would in one reflection batch, but no round reuses another's.
  const once = (): number => {
    resetTextMemo();
    const t0 = performance.now();
    for (const it of items) if (checkProposal(it.proposal, it.ctx).ok) sink++;
    return performance.now() - t0;
  };
  for (let r = 0; r < warmup; r++) once();
  const roundRates: number[] = [];
  for (let r = 0; r < rounds; r++) roundRates.push(items.length / (once() / 1000));
  // Each call timed alone (hrtime costs well under a microsecond), for the per-proposal figures.
  const samples: number[] = [];
  const byKind = new Map<string, number[]>();
  for (let r = 0; r < Math.max(3, Math.ceil(rounds / 3)); r++) {
    resetTextMemo();
    for (const it of items) {
      const t0 = process.hrtime.bigint();
      if (checkProposal(it.proposal, it.ctx).ok) sink++;
      const us = Number(process.hrtime.bigint() - t0) / 1000;
      samples.push(us);
      const list = byKind.get(it.kind) ?? [];
      list.push(us);
      byKind.set(it.kind, list);
    }
  }
  if (sink === 0) throw new BenchError('no proposal passed: the pure run measured nothing useful');
  return {
    proposals: items.length,
    rounds,
    warmupRounds: warmup,
    proposalsPerSec: median(roundRates),
    roundRates,
    perProposalMedianUs: median(samples),
    perProposalP95Us: percentile(samples, 0.95),
    byKindUs: Object.fromEntries([...byKind].map(([k, xs]) => [k, median(xs)])),
  };
}

// ---------------------------------------------------------------------------------------------
// End to end through the store.

/**
 * The subject, the 50-turn session, and the retracted claims, recorded through the subject's
 * handle: the claims go into the retraction ledger, where the gate reads standing claims.
 * The mix check below proves they took.
 */
async function seedStore(engine: Engine, conv: Conversation): Promise<void> {
  await engine.subjects.create(SUBJECT);
  const me = engine.subject(SUBJECT);
  await me.sessions.create({ id: SESSION });
  for (const t of conv.turns) {
    const base = { sessionId: SESSION, role: t.role, content: t.content };
    const result = await me.turns.add({
      ...base,
      ...(t.receipt === undefined ? {} : { receipt: t.receipt }),
      ...(t.corrective ? { corrective: true } : {}),
    });
    if (!result.recorded || result.turn.seq !== t.seq) {
      throw new BenchError(`turn ${t.seq} was not recorded at its seq`);
    }
  }
  for (const claim of conv.retracted) {
    await me.ledger.retract({
      claim,
      stoodOn: 'a reflection',
      whyWrong: 'the user never said it',
      corrected: 'unknown',
      caughtBy: 'owner',
      procedure: 'ask the user',
      passObservation: 'the user confirms it is wrong',
      overturnCondition: 'the user confirms it',
      dueDays: 30,
    });
  }
}

interface StoreRound {
  proposalsPerSec: number;
  batchMs: number[];
}

interface StoreResult {
  engine: BenchKind;
  proposalsPerSec: number;
  batchMedianMs: number;
  proposed: number;
  dropped: number;
  codes: Record<string, number>;
  rounds: StoreRound[];
}

function tally(results: readonly ProposeResult[]): Record<string, number> {
  const codes: Record<string, number> = {};
  for (const r of results) {
    codes.ok = (codes.ok ?? 0) + r.proposed.length;
    for (const d of r.dropped) codes[d.code] = (codes[d.code] ?? 0) + 1;
  }
  return codes;
}

async function runStore(
  kind: BenchKind,
  conv: Conversation,
  warmBatch: readonly BenchItem[],
  batches: readonly BenchItem[][],
  roundCount: number,
): Promise<StoreResult> {
  const rounds: StoreRound[] = [];
  let last: ProposeResult[] = [];
  for (let r = 0; r < roundCount; r++) {
    const round = await withBenchStore(kind, 'ml_gate_bench', async (engine) => {
      await seedStore(engine, conv);
      const me = engine.subject(SUBJECT);
      const propose = (batch: readonly BenchItem[]): Promise<ProposeResult> =>
        me.gate.propose({
          sessionId: SESSION,
          // raw items as a reflection writes them: the gate drops what is not a proposal
          proposals: batch.map((x) => x.raw as unknown as Proposal),
          proposedBy: 'reflection',
        });
      await propose(warmBatch);
      const batchMs: number[] = [];
      const results: ProposeResult[] = [];
      for (const batch of batches) {
        const t0 = performance.now();
        results.push(await propose(batch));
        batchMs.push(performance.now() - t0);
      }
      last = results;
      const total = batchMs.reduce((a, b) => a + b, 0);
      return { proposalsPerSec: (batches.length * BATCH_SIZE) / (total / 1000), batchMs };
    });
    rounds.push(round);
    progress(
      `${kind} round ${r + 1}/${roundCount}: ${round.proposalsPerSec.toFixed(0)} proposals/s`,
    );
  }
  const codes = tally(last);
  const proposed = codes.ok ?? 0;
  return {
    engine: kind,
    proposalsPerSec: median(rounds.map((r) => r.proposalsPerSec)),
    batchMedianMs: median(rounds.flatMap((r) => r.batchMs)),
    proposed,
    dropped: batches.length * BATCH_SIZE - proposed,
    codes,
    rounds,
  };
}

// ---------------------------------------------------------------------------------------------

function countBy<T>(xs: readonly T[], key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
}

const sameCounts = (a: Record<string, number>, b: Record<string, number>): boolean =>
  [...new Set([...Object.keys(a), ...Object.keys(b)])].every((k) => a[k] === b[k]);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      batches: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      'pure-rounds': { type: 'string', default: '30' },
      'pure-warmup': { type: 'string', default: '5' },
      engines: { type: 'string', default: BENCH_KINDS.join(',') },
      json: { type: 'boolean', default: false },
    },
  });
  const batchCount = positiveInt('batches', values.batches, 1);
  const roundCount = positiveInt('rounds', values.rounds, 1);
  const pureRounds = positiveInt('pure-rounds', values['pure-rounds'], 1);
  const pureWarmup = positiveInt('pure-warmup', values['pure-warmup'], 0);
  const kinds = await benchKinds(values.engines);

  const conv = buildConversation();
  const warmBatch = makeBatch(conv, 0);
  const batches = Array.from({ length: batchCount }, (_, b) => makeBatch(conv, b + 1));
  // The pure run replays the warm-up batch too, so its pile matches the store's exactly.
  const prepared = prepareContexts(conv, [warmBatch, ...batches], SESSION);
  const items = prepared.filter((x) => x.batch > 0);

  // The mix, checked: every item must meet the verdict it was built for.
  const misses = items.filter((x) => x.verdict !== x.expect);
  const pureCodes = countBy(items, (x) => x.verdict);
  const userTurns = conv.turns.filter((t) => t.role === 'user').map((t) => t.content.length);
  const workload = {
    batches: batchCount,
    batchSize: BATCH_SIZE,
    proposals: items.length,
    sessionTurns: conv.turns.length,
    userTurnChars: {
      min: Math.min(...userTurns),
      median: median(userTurns),
      max: Math.max(...userTurns),
    },
    retractedClaims: conv.retracted.length,
    expected: countBy(items, (x) => x.expect),
    pureCodes,
    attested: items.filter((x) => x.attested).length,
    mismatches: misses.map((x) => ({
      kind: x.kind,
      expected: x.expect,
      got: x.verdict,
      text: x.proposal.text,
    })),
  };

  const pure = runPure(items, pureRounds, pureWarmup);
  progress(`pure: ${pure.proposalsPerSec.toFixed(0)} proposals/s`);

  const store: StoreResult[] = [];
  for (const kind of kinds) {
    store.push(await runStore(kind, conv, warmBatch, batches, roundCount));
  }
  const storeAgrees = store.every((s) => sameCounts(s.codes, pureCodes));

  if (values.json) {
    console.log(
      JSON.stringify(
        { target: TARGET, workload, pure, store, mixOk: misses.length === 0, storeAgrees },
        null,
        2,
      ),
    );
    return;
  }

  const fmt = (n: number, w = 7): string => Math.round(n).toLocaleString('en-US').padStart(w);
  console.log(
    `gate: ${items.length} proposals (${batchCount} batches of ${BATCH_SIZE}) on a ` +
      `${conv.turns.length}-turn session (user turns ${workload.userTurnChars.min}-` +
      `${workload.userTurnChars.max} chars, median ${workload.userTurnChars.median}), ` +
      `${conv.retracted.length} retracted claims`,
  );
  console.log('');
  console.log(`${'item kind'.padEnd(38)} ${'expect'.padEnd(22)} ${'n'.padStart(4)}  median µs`);
  for (const [kind, count, expect] of MIX) {
    const us = pure.byKindUs[kind] ?? NaN;
    console.log(
      `${kind.padEnd(38)} ${expect.padEnd(22)} ${String(count * batchCount).padStart(4)}  ${us.toFixed(1).padStart(9)}`,
    );
  }
  console.log('');
  const codeLine = (codes: Record<string, number>): string =>
    Object.entries(codes)
      .sort((a, b) => b[1] - a[1])
      .map(([c, n]) => `${c} ${n}`)
      .join(', ');
  console.log(
    `verdicts (pure):  ${codeLine(pureCodes)}; attested ${workload.attested} of ${pureCodes.ok ?? 0} passed`,
  );
  for (const s of store)
    console.log(
      `verdicts (${s.engine}):${' '.repeat(Math.max(1, 8 - s.engine.length))}${codeLine(s.codes)}`,
    );
  console.log(
    misses.length === 0
      ? `mix check: every item got the verdict it was built for${store.length > 0 ? (storeAgrees ? '; the stores agree' : '') : ''}`
      : `MIX CHECK FAILED: ${misses.length} items missed their verdict (e.g. ${misses[0]?.kind}: expected ${misses[0]?.expect}, got ${misses[0]?.verdict})`,
  );
  if (!storeAgrees)
    console.log('STORE CHECK FAILED: a store judged the batches differently from the pure rules');
  console.log('');
  console.log(
    `pure rules ${fmt(pure.proposalsPerSec)} proposals/s  (median of ${pure.rounds} rounds, ` +
      `${pure.warmupRounds} warm-up; per proposal median ${pure.perProposalMedianUs.toFixed(1)} µs, ` +
      `p95 ${pure.perProposalP95Us.toFixed(1)} µs)  target >= ${TARGET.toLocaleString('en-US')}/s: ` +
      `${pure.proposalsPerSec >= TARGET ? 'met' : 'NOT met'}`,
  );
  for (const s of store) {
    console.log(
      `${s.engine.padEnd(10)} ${fmt(s.proposalsPerSec)} proposals/s  (median of ${s.rounds.length} rounds; ` +
        `batch of ${BATCH_SIZE} median ${s.batchMedianMs.toFixed(1)} ms; ${s.proposed} proposed, ` +
        `${s.dropped} dropped per round)`,
    );
  }
}

runMain('gate-bench', main);
