/**
 * A large recall store made of the LoCoMo conversations copied over and over, each copy in
 * sessions of its own, so term statistics look like real conversation at scale (every rare word
 * recurs once per copy, speaker names are in a quarter of all turns), plus facts: with an owner
 * signer, every 10th turn decided by the owner in a signed chain (bench/support/locomo-chain.ts);
 * without one, every 20th turn stored as live with no decision (which reads now withhold).
 *
 * Seeding goes through set-based SQL, not one engine call per turn: turns are inserted with the
 * engine's own analysis (`analyze`) and the index is then built from them in bulk, with exactly
 * the definitions the write trigger applies; `checkLocomoStore` proves that every term's df and
 * sdf and every session's length agree with the postings.
 */
import { storeClient } from '../../src/engine/test-access.js';
import type { Engine, OwnerSigner } from '../../src/index.js';
import { analyze } from '../../src/rules.js';
import { BenchError } from './bench-error.js';
import type { LocomoConversation } from '../../eval/locomo-data.js';
import { insertDecidedFacts, seedLocomoChains, type LocomoChains } from './locomo-chain.js';

/** The subject every turn goes to in the one-subject layout. */
export const LOCOMO_SUBJECT = 'owner';
/** Every 20th turn is restated as a live fact, up to this many. */
export const LOCOMO_FACTS = 5_000;
const BATCH = 2_000;

/**
 * One subject holding every turn (the worst case), each conversation copy its own, or long
 * conversations: the copies' sessions in order, a new subject begun at the first session
 * boundary after LONG_TURNS turns (a subject of 1,000 turns or a few more).
 */
export type Layout = 'one-subject' | 'per-conversation' | 'long-conversations';
/** The layouts, in the order the recall bench runs them. */
export const LAYOUTS: readonly Layout[] = ['one-subject', 'per-conversation', 'long-conversations'];
/** The turns a long-conversation subject holds at least (the last one may hold fewer). */
export const LONG_TURNS = 1_000;

/** One turn as the bulk insert writes it, its analysed terms space-joined. */
export interface SeedTurn {
  subject: string;
  session: string;
  seq: number;
  speaker: string;
  content: string;
  at: Date;
  terms: string;
}

/** The subject a conversation copy is stored under (long conversations: see `firstSubjects`). */
const subjectOf = (layout: Layout, copy: number, conv: string): string =>
  layout === 'one-subject' ? LOCOMO_SUBJECT : `c${copy}-${conv}`;

/** Where each conversation copy (`c<copy>-<conv>`) begins: the subject of its first turn. */
export function firstSubjects(turns: readonly SeedTurn[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of turns) {
    const copy = t.session.slice(0, t.session.lastIndexOf('-s'));
    if (!out.has(copy)) out.set(copy, t.subject);
  }
  return out;
}

/** The first `total` turns of the conversations copied over and over. */
export function seedTurns(
  convs: readonly LocomoConversation[],
  total: number,
  layout: Layout = 'one-subject',
): SeedTurn[] {
  const out: SeedTurn[] = [];
  let long = 0;
  let inLong = 0;
  for (let copy = 0; out.length < total; copy++) {
    for (const conv of convs) {
      for (const s of conv.sessions) {
        const session = `c${copy}-${conv.id}-s${s.number}`;
        if (layout === 'long-conversations' && inLong >= LONG_TURNS) {
          long += 1;
          inLong = 0;
        }
        inLong += s.turns.length;
        const subject =
          layout === 'long-conversations' ? `long${long}` : subjectOf(layout, copy, conv.id);
        for (const t of s.turns) {
          if (out.length === total) return out;
          out.push({
            subject,
            session,
            seq: t.seq,
            speaker: t.speaker,
            content: t.content,
            // later copies a day later each, so dates differ but months still match questions
            at: new Date(s.date.getTime() + copy * 86_400_000 + t.seq * 1000),
            terms: [...analyze(t.speaker), ...analyze(t.content)].join(' '),
          });
        }
      }
    }
  }
  return out;
}

/**
 * Creates the turns' subjects and bulk-loads sessions, turns, the recall index and facts. With
 * `signer`, the facts are decided in each subject's signed chain (verified before this returns).
 */
export async function seedLocomoStore(
  engine: Engine,
  turns: readonly SeedTurn[],
  signer?: OwnerSigner,
): Promise<LocomoChains | null> {
  for (const subject of new Set(turns.map((t) => t.subject))) {
    await engine.subjects.create(subject);
  }
  const sql = storeClient(engine);
  const sessions = new Map(turns.map((t) => [t.session, t.subject]));
  await sql.query(
    `INSERT INTO sessions (subject_id, id, created_at)
     SELECT s, id, now() FROM unnest($1::text[], $2::text[]) AS x(s, id)`,
    [[...sessions.values()], [...sessions.keys()]],
  );
  await sql.exec('ALTER TABLE turns DISABLE TRIGGER turns_index');
  for (let i = 0; i < turns.length; i += BATCH) {
    const b = turns.slice(i, i + BATCH);
    await sql.query(
      `INSERT INTO turns (subject_id, session_id, seq, id, role, content, recorded_at, speaker, terms)
       SELECT sub, s, q, s || '#' || q, 'user', c, a, sp, string_to_array(tm, ' ')
       FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::text[],
                   $7::text[]) AS x(sub, s, q, c, a, sp, tm)`,
      [
        b.map((t) => t.subject),
        b.map((t) => t.session),
        b.map((t) => t.seq),
        b.map((t) => t.content),
        b.map((t) => t.at),
        b.map((t) => t.speaker),
        b.map((t) => t.terms),
      ],
    );
  }
  await sql.exec('ALTER TABLE turns ENABLE TRIGGER turns_index');
  // the trigger's definitions, in bulk
  await sql.exec(`
    INSERT INTO turn_postings (subject_id, term, session_id, seq, tf, len)
    SELECT subject_id, term, session_id, seq, count(*), max(cardinality(terms))
    FROM turns, unnest(terms) AS term GROUP BY subject_id, term, session_id, seq;
    INSERT INTO term_stats (subject_id, term, df, sdf)
    SELECT subject_id, term, count(*), count(DISTINCT session_id)
    FROM turn_postings GROUP BY subject_id, term;
    INSERT INTO session_terms (subject_id, term, session_id, tf)
    SELECT subject_id, term, session_id, sum(tf)::int
    FROM turn_postings GROUP BY subject_id, term, session_id;
    INSERT INTO recall_corpus (subject_id, turns, sessions, term_len)
    SELECT subject_id, count(*), count(DISTINCT session_id), sum(cardinality(terms))
    FROM turns GROUP BY subject_id;
    UPDATE sessions s SET last_seq = x.n, term_len = x.len, last_turn_at = x.last
    FROM (SELECT session_id, count(*) AS n, sum(cardinality(terms)) AS len,
                 max(recorded_at) AS last FROM turns GROUP BY session_id) x
    WHERE s.id = x.session_id;`);
  if (signer !== undefined) {
    await insertDecidedFacts(engine);
    return seedLocomoChains(engine, signer);
  }
  // every 20th turn, restated as a live fact
  await sql.query(
    `INSERT INTO facts (subject_id, id, slot, text, origin, status, attested, proposed_by,
                        recorded_at, status_at, promoted_by, terms)
     SELECT subject_id, 'fact-' || rn, 'what_i_know_about_user', content, 'saw', 'active', true,
            'bench', recorded_at, recorded_at, 'owner', terms
     FROM (SELECT t.*, row_number() OVER (ORDER BY session_id, seq) AS rn FROM turns t) x
     WHERE rn % 20 = 0 LIMIT $1`,
    [LOCOMO_FACTS],
  );
  return null;
}

/** What autovacuum would do on PostgreSQL; on PGlite the recall tables' VACUUM ANALYZE. */
export async function vacuumLocomoStore(engine: Engine): Promise<void> {
  const sql = storeClient(engine);
  await sql.exec(
    sql.kind === 'postgres'
      ? 'VACUUM ANALYZE'
      : 'VACUUM ANALYZE turn_postings, term_stats, session_terms, recall_corpus, facts',
  );
}

/**
 * Fails unless the store holds `turns` turns, the live facts seeded from them (`liveFacts` when
 * given, else about every 20th turn), and an index that agrees with them; returns how many facts
 * are stored as live.
 */
export async function checkLocomoStore(
  engine: Engine,
  turns: number,
  liveFacts?: number,
): Promise<number> {
  const { rows } = await storeClient(engine).query<{
    turns: number;
    facts: number;
    bad: number;
    badlen: number;
  }>(
    `SELECT (SELECT count(*) FROM turns)::int AS turns,
            (SELECT count(*) FROM facts WHERE status = 'active')::int AS facts,
            (SELECT count(*) FROM term_stats s
             LEFT JOIN (SELECT subject_id, term, count(*) AS df, count(DISTINCT session_id) AS sdf
                        FROM turn_postings GROUP BY 1, 2) p USING (subject_id, term)
             WHERE p.df IS DISTINCT FROM s.df OR p.sdf IS DISTINCT FROM s.sdf)::int AS bad,
            (SELECT count(*) FROM sessions s WHERE (s.last_seq, s.term_len) <>
               (SELECT count(*), coalesce(sum(cardinality(terms)), 0) FROM turns t
                WHERE t.session_id = s.id))::int
            + (SELECT count(*) FROM recall_corpus c WHERE
               (c.turns, c.sessions, c.term_len) <> (SELECT count(*), count(DISTINCT session_id),
                 sum(cardinality(terms)) FROM turns t WHERE t.subject_id = c.subject_id))::int
              AS badlen`,
  );
  const r = rows[0];
  const facts = Math.min(LOCOMO_FACTS, Math.floor(turns / 20));
  const factsOk = liveFacts === undefined ? (r?.facts ?? 0) >= facts * 0.9 : r?.facts === liveFacts;
  if (r?.turns !== turns || r.bad !== 0 || r.badlen !== 0 || !factsOk) {
    throw new BenchError(`seeding went wrong: ${JSON.stringify(r)}`);
  }
  return r.facts;
}
