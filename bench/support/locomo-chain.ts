/**
 * Facts the owner decided on a LoCoMo recall store (bench/support/locomo-store.ts), with the
 * signed chain of those decisions. Every 10th turn of each subject, in time order, was proposed
 * as a `saw` fact citing it; the owner decided each one, in the same order, an hour after it was
 * recorded. Of every ten facts n (n = 1, 2, … per subject):
 *
 * - n ≡ 0, 8 (mod 10): approved, each with a key of its own (live);
 * - n ≡ 1, 3, 6: approved, then superseded when the owner approved n + 1 for the same key;
 * - n ≡ 2, 4, 7: approved, superseding n − 1 (live);
 * - n ≡ 5, 9: rejected.
 *
 * So half the facts are live, and 100,000 turns in one subject give exactly 10,000 decisions:
 * 8,000 approvals (3,000 of them superseding a value) and 2,000 rejects.
 */
import { storeClient } from '../../src/engine/test-access.js';
import type { Engine, OwnerSigner } from '../../src/index.js';
import { assertChainOk, decidedFacts, sealChain, storeChain } from './owner-chain.js';

/** A turn becomes a fact every this many turns of its subject. */
export const FACT_EVERY = 10;
const HOUR = 3_600_000;

/** The id of a subject's n-th fact: zero-padded, so ids sort in decision order. */
const FACT_ID = (n: string) => `t.subject_id || '-fact-' || lpad((${n})::text, 6, '0')`;

/** Inserts the decided facts (see above) of every subject, with their lineage, in one statement. */
export async function insertDecidedFacts(engine: Engine): Promise<void> {
  await storeClient(engine).exec(`
    WITH ranked AS (
      SELECT t.*, row_number() OVER (PARTITION BY subject_id ORDER BY recorded_at, id) AS rn
      FROM turns t
    ), numbered AS (
      SELECT r.*, r.rn / ${FACT_EVERY} AS n
      FROM ranked r WHERE r.rn % ${FACT_EVERY} = 0
    ), t AS (
      SELECT x.*, max(x.n) OVER (PARTITION BY x.subject_id) AS last_n,
             lead(x.recorded_at) OVER (PARTITION BY x.subject_id ORDER BY x.n) AS next_at,
             CASE WHEN x.n % 10 IN (5, 9) THEN 'rejected'
                  WHEN x.n % 10 IN (1, 3, 6)
                       AND x.n < max(x.n) OVER (PARTITION BY x.subject_id) THEN 'superseded'
                  ELSE 'active' END AS st
      FROM numbered x
    )
    INSERT INTO facts (subject_id, id, slot, key, text, origin, status, attested, evidence_turn_id,
                       evidence_session_id, evidence_seq, evidence_quote, proposed_by, supersedes_id,
                       superseded_by_id, recorded_at, status_at, superseded_at, promoted_by, terms)
    SELECT t.subject_id, ${FACT_ID('t.n')}, 'what_i_know_about_user',
           CASE WHEN t.n % 10 IN (1, 2) THEN 'p' || (t.n / 10) || 'a'
                WHEN t.n % 10 IN (3, 4) THEN 'p' || (t.n / 10) || 'b'
                WHEN t.n % 10 IN (6, 7) THEN 'p' || (t.n / 10) || 'c'
                ELSE 'k' || t.n END,
           t.content, 'saw', t.st, true, t.id, t.session_id, t.seq, left(t.content, 80), 'bench',
           CASE WHEN t.n % 10 IN (2, 4, 7) THEN ${FACT_ID('t.n - 1')} END,
           CASE WHEN t.st = 'superseded' THEN ${FACT_ID('t.n + 1')} END,
           t.recorded_at,
           CASE WHEN t.st = 'superseded' THEN t.next_at ELSE t.recorded_at END + interval '1 hour',
           CASE WHEN t.st = 'superseded' THEN t.next_at + interval '1 hour' END,
           CASE WHEN t.st = 'rejected' THEN NULL ELSE 'owner' END,
           t.terms
    FROM t`);
}

/** What the chains hold, over all subjects. */
export interface LocomoChains {
  subjects: number;
  links: number;
  /** The longest chain, and its subject. */
  longest: { subject: string; links: number };
  liveFacts: number;
  approvals: number;
  rejects: number;
  signMs: number;
  /** The engine's full `owner.verifyChain`, summed over the subjects. */
  verifyMs: number;
}

/**
 * Signs, stores and verifies (the engine's full `owner.verifyChain`, which fails the bench when
 * not ok) every subject's chain of decisions on the facts `insertDecidedFacts` wrote.
 */
export async function seedLocomoChains(engine: Engine, signer: OwnerSigner): Promise<LocomoChains> {
  const out: LocomoChains = {
    subjects: 0,
    links: 0,
    longest: { subject: '', links: 0 },
    liveFacts: 0,
    approvals: 0,
    rejects: 0,
    signMs: 0,
    verifyMs: 0,
  };
  for (const subject of await engine.subjects.list()) {
    const facts = (await decidedFacts(engine, subject))
      .map((r) => r.fact)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const t0 = performance.now();
    const links = sealChain(
      subject,
      facts.map((fact) => ({
        kind: 'decide' as const,
        fact,
        decision: fact.status === 'rejected' ? ('reject' as const) : ('approve' as const),
        at: new Date(fact.recordedAt.getTime() + HOUR),
      })),
      signer,
    );
    out.signMs += performance.now() - t0;
    await storeChain(engine, subject, signer, links);
    out.verifyMs += (await assertChainOk(engine, subject, signer, links.length)).verifyMs;
    out.subjects++;
    out.links += links.length;
    if (links.length > out.longest.links) out.longest = { subject, links: links.length };
    out.liveFacts += facts.filter((f) => f.status === 'active').length;
    out.approvals += facts.filter((f) => f.status !== 'rejected').length;
    out.rejects += facts.filter((f) => f.status === 'rejected').length;
  }
  return out;
}
