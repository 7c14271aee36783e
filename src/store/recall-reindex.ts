import { analyze, ANALYZER_VERSION, turnTerms } from '../domain/text/analyze.js';
import { EngineError } from '../domain/errors.js';
import type { SqlClient, SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** Whether the recall index was built by this code's analyser. */
export interface RecallIndexStatus {
  /** `stored` equals `expected`. */
  current: boolean;
  /** The analyser version the store records; null when it records none. */
  stored: string | null;
  /** This code's analyser version (`ANALYZER_VERSION`). */
  expected: string;
}

/** How far a reindex is: rows whose terms were rewritten, of all turns and facts. */
export interface ReindexProgress {
  done: number;
  total: number;
}

/** Per-call options of `reindexRecall`. */
export interface ReindexOptions {
  /** Called after every batch of rows, and once at the end with `done === total`. */
  onProgress?: (p: ReindexProgress) => void;
  /**
   * Rebuild only if the index is still another analyser's once the lock is held (another
   * process may have rebuilt it meanwhile); otherwise rewrite nothing and return zero counts.
   */
  ifStale?: boolean;
}

/** What a reindex rewrote. */
export interface ReindexResult {
  turns: number;
  facts: number;
}

/** Rows analysed and written per statement. */
const BATCH = 500;

/** Reads the analyser version the store's recall index was built with. */
export function checkRecallIndex(client: SqlExecutor): Promise<RecallIndexStatus> {
  return guard('reading the recall index version', async () => {
    const { rows } = await client.query<{ analyzer_version: string }>(
      'SELECT analyzer_version FROM recall_index',
    );
    const stored = rows[0]?.analyzer_version ?? null;
    return { current: stored === ANALYZER_VERSION, stored, expected: ANALYZER_VERSION };
  });
}

/** The refusal for a store indexed by another analyser: reindexing is a deliberate step. */
export function reindexRequired(status: RecallIndexStatus): EngineError {
  const built =
    status.stored === null
      ? 'the recall index records no analyzer version'
      : `the recall index was built by analyzer version ${status.stored}`;
  return new EngineError(
    'REINDEX_REQUIRED',
    `${built}, and this memledger analyses text as version ${status.expected}: run \`memledger reindex\` (or open the engine with \`reindex: true\`) to rebuild it`,
    { data: { stored: status.stored, expected: status.expected } },
  );
}

/** Throws REINDEX_REQUIRED unless the recall index was built by this code's analyser. */
export async function requireCurrentRecallIndex(client: SqlExecutor): Promise<void> {
  const status = await checkRecallIndex(client);
  if (!status.current) throw reindexRequired(status);
}

/** Serialises reindexes across processes sharing one PostgreSQL database. */
async function lockReindex(tx: SqlExecutor): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('memledger.reindex'))`);
}

interface TurnKey {
  subject_id: string;
  session_id: string;
  seq: number;
}

/**
 * Rewrites every turn's terms in key order and replays the index trigger over each batch, so the
 * postings, term statistics and corpus totals are built by the same SQL that builds them on
 * write (`memledger_index_turn`, migrations 0006 and 0015), turn after turn in order.
 */
async function reindexTurns(tx: SqlExecutor, tick: (n: number) => void): Promise<number> {
  await tx.exec(
    `DELETE FROM turn_postings; DELETE FROM term_stats; DELETE FROM session_terms; DELETE FROM recall_corpus`,
  );
  await tx.exec(`CREATE TEMP TABLE memledger_reindex ON COMMIT DROP AS
    SELECT subject_id, session_id, seq, terms FROM turns WITH NO DATA`);
  await tx.exec(`CREATE TRIGGER memledger_reindex_index AFTER INSERT ON memledger_reindex
    FOR EACH ROW EXECUTE FUNCTION memledger_index_turn()`);
  let after: TurnKey = { subject_id: '', session_id: '', seq: 0 };
  let count = 0;
  for (;;) {
    const { rows } = await tx.query<TurnKey & { speaker: string | null; content: string }>(
      `SELECT subject_id, session_id, seq, speaker, content FROM turns
       WHERE (subject_id, session_id, seq) > ($1, $2, $3)
       ORDER BY subject_id, session_id, seq LIMIT $4`,
      [after.subject_id, after.session_id, after.seq, BATCH],
    );
    const last = rows.at(-1);
    if (last === undefined) break;
    const batch = rows.map((r) => ({
      subject_id: r.subject_id,
      session_id: r.session_id,
      seq: r.seq,
      terms: turnTerms(r.speaker, r.content),
    }));
    await tx.query(
      `UPDATE turns t SET terms = ARRAY(SELECT jsonb_array_elements_text(v.terms))
       FROM jsonb_to_recordset($1::jsonb) AS v(subject_id text, session_id text, seq integer, terms jsonb)
       WHERE t.subject_id = v.subject_id AND t.session_id = v.session_id AND t.seq = v.seq`,
      [JSON.stringify(batch)],
    );
    await tx.query(
      `INSERT INTO memledger_reindex (subject_id, session_id, seq, terms)
       SELECT subject_id, session_id, seq, terms FROM turns
       WHERE (subject_id, session_id, seq) > ($1, $2, $3)
         AND (subject_id, session_id, seq) <= ($4, $5, $6)
       ORDER BY subject_id, session_id, seq`,
      [after.subject_id, after.session_id, after.seq, last.subject_id, last.session_id, last.seq],
    );
    await tx.exec('DELETE FROM memledger_reindex');
    after = last;
    count += rows.length;
    tick(rows.length);
  }
  await tx.exec(`UPDATE sessions s SET term_len = coalesce(
    (SELECT sum(cardinality(t.terms)) FROM turns t
     WHERE t.subject_id = s.subject_id AND t.session_id = s.id), 0)`);
  return count;
}

/** Rewrites every fact's terms, in key order. */
async function reindexFacts(tx: SqlExecutor, tick: (n: number) => void): Promise<number> {
  let after = { subject_id: '', id: '' };
  let count = 0;
  for (;;) {
    const { rows } = await tx.query<{ subject_id: string; id: string; text: string }>(
      `SELECT subject_id, id, text FROM facts WHERE (subject_id, id) > ($1, $2)
       ORDER BY subject_id, id LIMIT $3`,
      [after.subject_id, after.id, BATCH],
    );
    const last = rows.at(-1);
    if (last === undefined) break;
    const batch = rows.map((r) => ({ subject_id: r.subject_id, id: r.id, terms: analyze(r.text) }));
    await tx.query(
      `UPDATE facts f SET terms = ARRAY(SELECT jsonb_array_elements_text(v.terms))
       FROM jsonb_to_recordset($1::jsonb) AS v(subject_id text, id text, terms jsonb)
       WHERE f.subject_id = v.subject_id AND f.id = v.id`,
      [JSON.stringify(batch)],
    );
    after = last;
    count += rows.length;
    tick(rows.length);
  }
  return count;
}

/**
 * Rebuilds the recall index of every subject with this code's analyser (turns' and facts'
 * terms, postings, term statistics, corpus totals, session lengths) and records its version,
 * in one transaction: other connections keep reading the old index until it commits, and
 * writers of turns, facts and sessions wait for it. Turns are append-only and facts' terms are
 * written once, so their guards are lifted for exactly this transaction.
 */
export async function reindexRecall(
  client: SqlClient,
  options: ReindexOptions = {},
): Promise<ReindexResult> {
  const result = await guard('reindexing recall', () =>
    client.transaction(async (tx) => {
      await lockReindex(tx);
      if (options.ifStale === true && (await checkRecallIndex(tx)).current) {
        return { turns: 0, facts: 0 };
      }
      // every table the rebuild writes, locked up front in one order (writers wait, readers not)
      await tx.exec(`LOCK TABLE sessions, turns, facts, turn_postings, term_stats, session_terms,
        recall_corpus, recall_index IN SHARE ROW EXCLUSIVE MODE`);
      const { rows } = await tx.query<{ n: number }>(
        `SELECT ((SELECT count(*) FROM turns) + (SELECT count(*) FROM facts))::float8 AS n`,
      );
      const total = rows[0]?.n ?? 0;
      let done = 0;
      const tick = (n: number): void => {
        done += n;
        options.onProgress?.({ done, total });
      };
      await tx.exec('ALTER TABLE turns DISABLE TRIGGER turns_append_only');
      await tx.exec('ALTER TABLE facts DISABLE TRIGGER facts_guard');
      const turns = await reindexTurns(tx, tick);
      const facts = await reindexFacts(tx, tick);
      await tx.exec('ALTER TABLE facts ENABLE TRIGGER facts_guard');
      await tx.exec('ALTER TABLE turns ENABLE TRIGGER turns_append_only');
      await tx.exec('DELETE FROM recall_index');
      await tx.query('INSERT INTO recall_index (analyzer_version) VALUES ($1)', [ANALYZER_VERSION]);
      if (done === 0) options.onProgress?.({ done, total });
      return { turns, facts };
    }),
  );
  // what autovacuum would do after a rewrite this size, where there is none (PGlite)
  if (!client.capabilities.autovacuum) {
    await guard('vacuuming the recall index', () =>
      client.exec('VACUUM ANALYZE turn_postings, term_stats, session_terms, recall_corpus, facts'),
    );
  }
  return result;
}
