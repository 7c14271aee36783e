/**
 * What verifying reads against the owner's chain costs (src/gate/trust-verifier.ts): the first
 * trust view of a new verifier, which is what a fresh engine's first read does (every link's hash
 * and Ed25519 signature checked, every live row read and hashed), the steady-state cost of one
 * read on a warm verifier (one probe: the chain, the verified links' row versions and the mark
 * of the facts and ledger rows; the kept view is returned when nothing changed), the cost of a
 * read right after a live row changed (the view built again: the live rows' versions, the
 * departed facts, the ledger, the judgement), and how the one-off part grows with the chain's
 * length.
 *
 * Each verifier here is made exactly as createModules makes the engine's (a remembering verifier
 * over its own node:crypto instance), so nothing is shared with the engine or with each other.
 */
import type { Fact } from '../../src/domain/fact.js';
import { createNodeChainCrypto } from '../../src/crypto/chain-crypto.js';
import { rememberingVerifier } from '../../src/domain/decision-chain.js';
import { judgeFacts, type TrustView } from '../../src/domain/trust.js';
import { ChainState, factContentHash } from '../../src/domain/chain-state.js';
import { storeClient } from '../../src/engine/test-access.js';
import { createTrustVerifier, type TrustVerifier } from '../../src/trust/trust-verifier.js';
import type { Engine } from '../../src/index.js';
import { DecisionSql } from '../../src/store/decision-sql.js';
import { TrustSql } from '../../src/trust/trust-sql.js';
import { BenchError } from './bench-error.js';
import { median, stats, type Stats } from './stats.js';

/** A verifier made as the engine makes its own, sharing nothing. */
export function freshVerifier(engine: Engine): TrustVerifier {
  return createTrustVerifier({
    client: storeClient(engine),
    crypto: rememberingVerifier(createNodeChainCrypto()),
    clock: () => new Date(),
  });
}

/** A trust view with nothing withheld or unexplained, the whole chain verified, or a BenchError. */
export function assertCleanView(v: TrustView, links: number): void {
  const problems = [
    v.chain.broken === null
      ? ''
      : `chain broken at ${v.chain.broken.brokenAt} (${v.chain.broken.code})`,
    v.chain.headCut === null ? '' : `head cut: ${v.chain.headCut.reason}`,
    v.chain.verified === links ? '' : `${v.chain.verified} of ${links} links verified`,
    v.withheld.length === 0
      ? ''
      : `${v.withheld.length} withheld (first: ${v.withheld[0]?.fact.id} ${v.withheld[0]?.code}: ${v.withheld[0]?.reason})`,
    v.unexplained.length === 0
      ? ''
      : `${v.unexplained.length} unexplained (first: ${v.unexplained[0]?.id} ${v.unexplained[0]?.reason})`,
  ].filter((p) => p !== '');
  if (problems.length > 0) {
    throw new BenchError(`subject "${v.subjectId}": trust view not clean: ${problems.join('; ')}`);
  }
}

/** The verification cost of one subject's reads. */
export interface TrustCost {
  subject: string;
  links: number;
  liveFacts: number;
  /** First view of each of three new verifiers, in ms, and their median. */
  firstViewMs: number[];
  firstViewMedianMs: number;
  /** trust.view on a warm verifier, per read. */
  warm: Stats;
  /** trust.view on a warm verifier right after a write to something it does not read. */
  elsewhere: Stats;
  /** trust.view on a warm verifier right after one live row changed (the view built again). */
  afterChange: Stats;
  /** The parts of one warm view, each timed alone. */
  parts: Array<{ step: string; stats: Stats }>;
  /** Verifying the first `links` links alone (hash, signature, decided content), in memory. */
  growth: Array<{ links: number; ms: number; usPerLink: number }>;
  /** First views of the other subjects (shorter chains). */
  others: Array<{ subject: string; links: number; liveFacts: number; firstViewMs: number }>;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

/**
 * Measures the cost for `subject` (whose chain must be `links` long and clean), with `reads`
 * warm views; `others` are first-viewed once each for the growth with chain length.
 */
export async function measureTrustCost(
  engine: Engine,
  subject: string,
  links: number,
  reads: number,
  others: ReadonlyArray<{ subject: string; links: number }> = [],
): Promise<TrustCost> {
  const client = storeClient(engine);
  const firstViewMs: number[] = [];
  let liveFacts = 0;
  for (let i = 0; i < 3; i++) {
    const { ms, value } = await timed(() => freshVerifier(engine).view(subject));
    assertCleanView(value, links);
    firstViewMs.push(ms);
    liveFacts = value.live.length;
  }

  // steady state: one warm verifier, read after read
  const trust = freshVerifier(engine);
  assertCleanView(await trust.view(subject), links);
  for (let i = 0; i < Math.min(20, reads); i++) await trust.view(subject);
  const warmMs: number[] = [];
  for (let i = 0; i < reads; i++) {
    const t0 = performance.now();
    await trust.view(subject);
    warmMs.push(performance.now() - t0);
  }

  // a read after a write somewhere else (a transaction that took an id and committed): the
  // server's snapshot moved on, so the probe runs its scans, and finds nothing this view reads
  // changed
  const elsewhereMs: number[] = [];
  for (let i = 0; i < reads; i++) {
    await client.query('SELECT pg_current_xact_id()');
    const t0 = performance.now();
    await trust.view(subject);
    elsewhereMs.push(performance.now() - t0);
  }

  // a read after a change: one live row rewritten as it was (a new row version, the same
  // content), so the view is built again (one repeatable-read snapshot, the changed row re-read)
  const sql = new TrustSql(client);
  // the probe as the verifier sends it: one statement on PGlite, four side by side on a pool
  const probing = new TrustSql(client, client.capabilities.concurrentConnections);
  const touched = (await sql.activeVersions(subject)).map((v) => v.id);
  const afterChangeMs: number[] = [];
  for (let i = 0; i < Math.min(reads, 50); i++) {
    const id = touched[i % touched.length];
    await client.query(
      `UPDATE facts SET status = status WHERE subject_id = $1 AND id = $2 AND status = 'active'`,
      [subject, id],
    );
    const t0 = performance.now();
    const v = await trust.view(subject);
    afterChangeMs.push(performance.now() - t0);
    assertCleanView(v, links);
  }

  // the parts of one warm view, alone
  const crypto = rememberingVerifier(createNodeChainCrypto());
  const state = await trust.withSubject(subject, (held) => held.chain(client));
  const versions = await sql.activeVersions(subject);
  const activeIds = new Set(versions.map((v) => v.id));
  const departedIds = state.chainLive().filter((id) => !activeIds.has(id));
  const active = (await sql.activeEvidence(subject, [...activeIds])).map((e) => ({
    ...e,
    contentHash: factContentHash(e.fact, crypto),
  }));
  const departed = await sql.departed(subject, departedIds);
  const since = (await sql.probe(subject))?.snapshotXmin ?? '';
  const steps: Array<{ step: string; run: () => unknown }> = [
    {
      step: 'a read: probe, links check and mark',
      run: () =>
        probing.probe(subject, {
          links: { len: state.length, since },
          markSince: since,
        }),
    },
    {
      step: `after a change: live rows' versions (${versions.length} rows)`,
      run: () => sql.activeVersions(subject),
    },
    {
      step: `after a change: departed facts (${departedIds.length} ids)`,
      run: () => sql.departed(subject, departedIds),
    },
    {
      step: 'after a change: unsigned departures',
      run: () => sql.unsignedDeparted(subject),
    },
    {
      step: `after a change: judgement (pure, ${active.length} facts)`,
      run: () => judgeFacts(state, active, departed, new Date(), crypto),
    },
  ];
  const partMs = steps.map(() => [] as number[]);
  for (let r = 0; r < reads + 5; r++) {
    for (const [i, s] of steps.entries()) {
      const t0 = performance.now();
      await s.run();
      if (r >= 5) partMs[i]?.push(performance.now() - t0);
    }
  }

  // the one-off part alone, in memory, over growing prefixes of the chain
  const chain = await new DecisionSql(client).chain(subject);
  const key = await engine.subject(subject).owner.key();
  if (key === null) throw new BenchError(`subject "${subject}" has no owner key`);
  const ids = chain.filter((l) => l.decision !== 'delegate').map((l) => l.proposalId);
  const facts = new Map<string, Fact>((await sql.facts(subject, ids)).map((f) => [f.id, f]));
  const growth: TrustCost['growth'] = [];
  for (const n of [...new Set([1_000, 5_000, chain.length])].filter((n) => n <= chain.length)) {
    const c = rememberingVerifier(createNodeChainCrypto());
    const s = new ChainState(subject, { crypto: c, ...key });
    const t0 = performance.now();
    s.extend(chain.slice(0, n), (id) => facts.get(id) ?? null, c);
    const ms = performance.now() - t0;
    if (s.broken !== null || s.length !== n) {
      throw new BenchError(`the first ${n} links did not verify: ${JSON.stringify(s.broken)}`);
    }
    growth.push({ links: n, ms, usPerLink: (ms * 1000) / n });
  }

  const otherCosts: TrustCost['others'] = [];
  for (const o of others) {
    const { ms, value } = await timed(() => freshVerifier(engine).view(o.subject));
    assertCleanView(value, o.links);
    otherCosts.push({
      subject: o.subject,
      links: o.links,
      liveFacts: value.live.length,
      firstViewMs: ms,
    });
  }

  return {
    subject,
    links,
    liveFacts,
    firstViewMs,
    firstViewMedianMs: median(firstViewMs),
    warm: stats(warmMs),
    elsewhere: stats(elsewhereMs),
    afterChange: stats(afterChangeMs),
    parts: steps.map((s, i) => ({ step: s.step, stats: stats(partMs[i] ?? []) })),
    growth,
    others: otherCosts,
  };
}

const int = (n: number): string => n.toLocaleString('en-US');
const f1 = (n: number): string => n.toFixed(1);

/** The verification cost, on one line. */
export function trustCostLine(engine: string, c: TrustCost): string {
  const growth = c.growth.map((g) => `${int(g.links)} links ${Math.round(g.ms)} ms`).join(', ');
  const perLink = c.growth.at(-1)?.usPerLink ?? NaN;
  const others = c.others
    .map((o) => `${int(o.links)} links (${o.subject}) ${f1(o.firstViewMs)} ms`)
    .join(', ');
  return (
    `verification cost (${engine}, subject "${c.subject}", ${int(c.links)} links, ${int(c.liveFacts)} live facts): ` +
    `first trust view of a fresh engine ${Math.round(c.firstViewMedianMs)} ms ` +
    `(median of ${c.firstViewMs.map((m) => Math.round(m)).join(', ')}); ` +
    `a read when nothing was written p50 ${f1(c.warm.p50)} ms, p95 ${f1(c.warm.p95)} ms; ` +
    `a read after a write elsewhere (the probe's scans) p50 ${f1(c.elsewhere.p50)} ms, p95 ${f1(c.elsewhere.p95)} ms; ` +
    `a read right after a live row changed p50 ${f1(c.afterChange.p50)} ms, p95 ${f1(c.afterChange.p95)} ms; ` +
    `one-off chain check grows linearly, ${f1(perLink)} µs per link (${growth})` +
    (others === '' ? '' : `; first view of shorter chains: ${others}`)
  );
}

/** The parts of a warm view, one line each (for the breakdown under the cost line). */
export function trustPartLines(c: TrustCost): string[] {
  return c.parts.map(
    (p) => `  ${p.step.padEnd(48)} ${f1(p.stats.p50).padStart(7)} ${f1(p.stats.p95).padStart(7)}`,
  );
}
