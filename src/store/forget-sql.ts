import { EngineError } from '../domain/errors.js';
import {
  foldPhrase,
  normalTargets,
  planIsEmpty,
  turnRanges,
  type ForgetPlan,
  type PlanScope,
  type ForgetTargets,
} from '../domain/forget.js';
import type { SqlClient, SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/**
 * The store's side of forgetting (docs/TRUST.md, "Forgetting"): what a scope comes to
 * (`plan`), the rows emptied or deleted in the owner's transaction (`apply`), and the bytes
 * removed from the database files once it commits (`scrubForgotten`).
 */

type TurnRef = { session: string; seq: number; id: string };

/** SQL: `col` folded as `foldPhrase` folds, and whether it holds `$2` (`phrasePattern`). */
const holds = (col: string): string =>
  `regexp_replace(lower(coalesce(${col}, '')), '\\s+', ' ', 'g') ~ $2`;

/**
 * A folded phrase as the pattern `holds` matches: its words as words ("tom" is not in "tomorrow"
 * or "atom"), every character of it literal.
 */
export const phrasePattern = (folded: string): string =>
  `(^|[^[:alnum:]_])${folded.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')}([^[:alnum:]_]|$)`;

/** SQL: the string values of a JSON column, joined (its keys and punctuation are not words). */
const jsonWords = (col: string): string =>
  `(SELECT string_agg(v #>> '{}', ' ') FROM jsonb_path_query(${col}, 'strict $.**') AS v
    WHERE jsonb_typeof(v) = 'string')`;

/** The scopes that take everything of a kind, and the phrase the others match by. */
interface Match {
  all: boolean;
  phrase: string | null;
}

export class ForgetSql {
  constructor(private readonly db: SqlExecutor) {}

  /**
   * What forgetting `scope` comes to now: every turn, fact (with its lineage), ledger row,
   * summary, dropped proposal and record that holds or rests on it. `liveFacts` names the live
   * facts it would take down that the scope did not name itself (summaries excepted: a summary
   * that cites a forgotten turn is withdrawn with it).
   */
  plan(subjectId: string, scope: PlanScope, honouring?: string): Promise<ForgetPlan> {
    return guard('planning a forget', async () => {
      const match: Match = {
        all: scope.kind === 'subject',
        phrase: scope.kind === 'phrase' ? phrasePattern(foldPhrase(scope.phrase)) : null,
      };
      const turns = await this.seedTurns(subjectId, scope, match);
      const turnIds = turns.map((t) => t.id);
      const sessions = new Set<string>();
      if (scope.kind === 'session') sessions.add(scope.session);
      for (const s of await this.matching(subjectId, 'sessions', 'id', ['title'], match))
        sessions.add(s);
      // a retention that empties a session takes its title too
      if (scope.kind === 'older') {
        for (const s of await this.emptied(subjectId, turnIds)) sessions.add(s);
      }

      const facts = new Set<string>();
      if (scope.kind === 'fact') {
        const { rows } = await this.db.query<{ id: string }>(
          'SELECT id FROM facts WHERE subject_id = $1 AND id = $2',
          [subjectId, scope.fact],
        );
        if (rows.length === 0) throw new EngineError('FACT_NOT_FOUND', `no fact "${scope.fact}"`);
        facts.add(scope.fact);
      }
      for (const id of await this.citing(subjectId, turnIds)) facts.add(id);
      // the facts the owner named: by id, or as holding the phrase (every one, for the subject)
      const factCols = ['text', 'evidence_quote', 'key', 'attestation_reason'];
      const named = new Set(await this.matching(subjectId, 'facts', 'id', factCols, match));
      if (scope.kind === 'fact') named.add(scope.fact);
      for (const id of named) facts.add(id);
      // a ledger row that holds the phrase goes with the fact it names
      const retractionCols = [
        'claim',
        'stood_on',
        'why_wrong',
        'corrected_claim',
        'procedure',
        'pass_observation',
        'overturn_condition',
        jsonWords('probe_spec'),
        'settled_outcome',
        'claim_ref',
        'claim_surface',
      ];
      const matchedRetractions = await this.matching(
        subjectId,
        'retractions',
        'id',
        retractionCols,
        match,
      );
      for (const id of await this.ids(
        `SELECT fact_id AS id FROM retractions
         WHERE subject_id = $1 AND id = ANY($2::text[]) AND fact_id IS NOT NULL`,
        [subjectId, matchedRetractions],
      ))
        facts.add(id);

      // lineage and summaries, until nothing more is pulled in
      const summaries = new Set<string>(
        await this.matching(subjectId, 'summary_sentences', 'summary_id', ['text'], match),
      );
      const summaryFacts = new Set<string>();
      for (;;) {
        const before = facts.size + summaries.size;
        for (const id of await this.lineage(subjectId, [...facts])) facts.add(id);
        for (const s of await this.withdrawn(subjectId, turnIds, [...facts], [...summaries])) {
          summaries.add(s.id);
          if (s.factId !== null) {
            facts.add(s.factId);
            summaryFacts.add(s.factId);
          }
        }
        if (facts.size + summaries.size === before) break;
      }

      const retractions = new Set(matchedRetractions);
      for (const id of await this.ids(
        `SELECT id FROM retractions WHERE subject_id = $1
           AND (fact_id = ANY($2::text[]) OR restored_fact_id = ANY($2::text[]))`,
        [subjectId, [...facts]],
      ))
        retractions.add(id);
      const probeRecords = new Set(
        await this.matching(
          subjectId,
          'probe_records',
          'id',
          [jsonWords('spec'), jsonWords('evidence'), 'purpose'],
          match,
        ),
      );
      for (const id of await this.ids(
        `SELECT settled_probe_record_id AS id FROM retractions
         WHERE subject_id = $1 AND id = ANY($2::text[]) AND settled_probe_record_id IS NOT NULL`,
        [subjectId, [...retractions]],
      ))
        probeRecords.add(id);

      const dropped = new Set(
        await this.matching(
          subjectId,
          'dropped_proposals',
          'id',
          ['text', jsonWords('proposal'), 'reason', 'slot'],
          match,
        ),
      );
      for (const id of await this.droppedCiting(subjectId, turns, [...sessions], scope))
        dropped.add(id);

      // requests whose words it removes: asked in a forgotten turn, or holding the phrase
      // a request whose own phrase holds this one is answered by it (all it names goes)
      const scopeHeld = await this.matching(
        subjectId,
        'forget_requests',
        'id',
        ["scope->>'phrase'"],
        match,
      );
      const requests = new Set([
        ...scopeHeld,
        ...(await this.matching(subjectId, 'forget_requests', 'id', ['quote'], match)),
      ]);
      for (const id of await this.ids(
        `SELECT r.id FROM forget_requests r
         JOIN unnest($2::text[], $3::int[]) AS g(session_id, seq)
           ON r.session_id = g.session_id AND r.seq = g.seq
         WHERE r.subject_id = $1`,
        [subjectId, turns.map((t) => t.session), turns.map((t) => t.seq)],
      ))
        requests.add(id);
      if (honouring !== undefined) requests.add(honouring);

      const targets: ForgetTargets = normalTargets({
        scope: scope.kind,
        turns: turnRanges(turns.map((t) => [t.session, t.seq] as const)),
        sessions: [...sessions],
        facts: [...facts],
        retractions: [...retractions],
        summaries: [...summaries],
        dropped: [...dropped],
        commitments: await this.matching(subjectId, 'commitments', 'id', ['title'], match),
        actions: await this.matching(subjectId, 'actions', 'id', ['target_summary'], match),
        probeRecords: [...probeRecords],
        requests: [...requests],
      });
      const { rows: live } = await this.db.query<{ id: string; slot: string; text: string }>(
        `SELECT id, slot, text FROM facts
         WHERE subject_id = $1 AND id = ANY($2::text[]) AND status = 'active'
         ORDER BY recorded_at, id`,
        [subjectId, targets.facts.filter((id) => !named.has(id) && !summaryFacts.has(id))],
      );
      const { rows: pending } = await this.db.query<{ id: string }>(
        `SELECT id FROM forget_requests WHERE subject_id = $1 AND id = ANY($2::text[])
           AND status = 'pending'`,
        [subjectId, targets.requests],
      );
      const answered = new Set(
        match.all
          ? pending.map((r) => r.id)
          : pending.map((r) => r.id).filter((id) => scopeHeld.includes(id)),
      );
      if (honouring !== undefined) answered.add(honouring);
      return {
        scope,
        targets,
        liveFacts: live,
        requests: { answered: [...answered].sort(), scopesCleared: [...new Set(scopeHeld)].sort() },
      };
    });
  }

  private async ids(sql: string, params: unknown[]): Promise<string[]> {
    const { rows } = await this.db.query<{ id: string }>(sql, params);
    return rows.map((r) => r.id);
  }

  /** A table's rows that hold the phrase in any of `cols` (every row, forgetting the subject). */
  private async matching(
    subjectId: string,
    table: string,
    idCol: string,
    cols: readonly string[],
    match: Match,
  ): Promise<string[]> {
    if (match.all) {
      return this.ids(`SELECT DISTINCT ${idCol} AS id FROM ${table} WHERE subject_id = $1`, [
        subjectId,
      ]);
    }
    if (match.phrase === null) return [];
    return this.ids(
      `SELECT DISTINCT ${idCol} AS id FROM ${table}
       WHERE subject_id = $1 AND (${cols.map(holds).join(' OR ')})`,
      [subjectId, match.phrase],
    );
  }

  private async seedTurns(subjectId: string, scope: PlanScope, match: Match): Promise<TurnRef[]> {
    const cols = 'session_id AS session, seq, id';
    const live = 'forget_id IS NULL';
    let rows: TurnRef[];
    if (scope.kind === 'turn') {
      const found = await this.db.query<TurnRef & { forget_id: string | null }>(
        `SELECT ${cols}, forget_id FROM turns WHERE subject_id = $1 AND session_id = $2 AND seq = $3`,
        [subjectId, scope.session, scope.seq],
      );
      const t = found.rows[0];
      if (t === undefined) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `session "${scope.session}" has no turn ${scope.seq}`,
          { data: { field: 'turn' } },
        );
      }
      if (t.forget_id !== null) {
        throw new EngineError(
          'NOTHING_TO_FORGET',
          `turn ${scope.seq} of session "${scope.session}" is forgotten already`,
        );
      }
      rows = [{ session: t.session, seq: t.seq, id: t.id }];
    } else if (scope.kind === 'session') {
      const s = await this.db.query('SELECT 1 FROM sessions WHERE subject_id = $1 AND id = $2', [
        subjectId,
        scope.session,
      ]);
      if (s.rows.length === 0) {
        throw new EngineError('SESSION_NOT_FOUND', `no session "${scope.session}"`);
      }
      rows = (
        await this.db.query<TurnRef>(
          `SELECT ${cols} FROM turns WHERE subject_id = $1 AND session_id = $2 AND ${live}`,
          [subjectId, scope.session],
        )
      ).rows;
    } else if (scope.kind === 'older') {
      rows = (await this.db.query<TurnRef>(OLD_TURNS_SQL, [subjectId, scope.before])).rows;
    } else if (match.all) {
      rows = (
        await this.db.query<TurnRef>(
          `SELECT ${cols} FROM turns WHERE subject_id = $1 AND ${live}`,
          [subjectId],
        )
      ).rows;
    } else if (match.phrase !== null) {
      rows = (
        await this.db.query<TurnRef>(
          `SELECT ${cols} FROM turns WHERE subject_id = $1 AND ${live}
             AND (${['content', 'speaker', "array_to_string(receipt_sources, ' ')", "array_to_string(receipt_tools, ' ')"].map(holds).join(' OR ')})`,
          [subjectId, match.phrase],
        )
      ).rows;
    } else {
      rows = [];
    }
    return rows.map((r) => ({ session: r.session, seq: Number(r.seq), id: r.id }));
  }

  /** Titled sessions every turn of which is forgotten already or among `turnIds`. */
  private emptied(subjectId: string, turnIds: readonly string[]): Promise<string[]> {
    if (turnIds.length === 0) return Promise.resolve([]);
    return this.ids(
      `SELECT s.id FROM sessions s WHERE s.subject_id = $1 AND s.title IS NOT NULL
         AND EXISTS (SELECT 1 FROM turns t WHERE t.subject_id = $1 AND t.session_id = s.id
                       AND t.id = ANY($2::text[]))
         AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.subject_id = $1 AND t.session_id = s.id
                           AND t.forget_id IS NULL AND NOT (t.id = ANY($2::text[])))`,
      [subjectId, turnIds],
    );
  }

  /** Facts that cite any of the turns, as evidence or among a summary's citations. */
  private citing(subjectId: string, turnIds: readonly string[]): Promise<string[]> {
    if (turnIds.length === 0) return Promise.resolve([]);
    return this.ids(
      `SELECT id FROM facts WHERE subject_id = $1 AND (evidence_turn_id = ANY($2::text[])
         OR (evidence_citations IS NOT NULL AND EXISTS (
               SELECT 1 FROM jsonb_array_elements(evidence_citations) c
               WHERE c->>'turn' = ANY($2::text[]))))`,
      [subjectId, turnIds],
    );
  }

  /** The facts linked to these by supersession or restoration, either way. */
  private lineage(subjectId: string, factIds: readonly string[]): Promise<string[]> {
    if (factIds.length === 0) return Promise.resolve([]);
    return this.ids(
      `SELECT id FROM facts WHERE subject_id = $1 AND (
         supersedes_id = ANY($2::text[]) OR superseded_by_id = ANY($2::text[])
         OR restored_from_id = ANY($2::text[])
         OR id IN (SELECT unnest(ARRAY[supersedes_id, superseded_by_id, restored_from_id])
                   FROM facts WHERE subject_id = $1 AND id = ANY($2::text[])))`,
      [subjectId, factIds],
    );
  }

  /**
   * Summaries that stand on what is forgotten: one citing a forgotten turn, whose fact is
   * forgotten, or whose previous version is withdrawn (its kept sentences rest on that one).
   */
  private async withdrawn(
    subjectId: string,
    turnIds: readonly string[],
    factIds: readonly string[],
    summaryIds: readonly string[],
  ): Promise<Array<{ id: string; factId: string | null }>> {
    const { rows } = await this.db.query<{ id: string; fact_id: string | null }>(
      `SELECT s.id, s.fact_id FROM summaries s WHERE s.subject_id = $1 AND (
         s.id = ANY($4::text[]) OR s.fact_id = ANY($3::text[]) OR s.previous_id = ANY($4::text[])
         OR EXISTS (SELECT 1 FROM summary_sentences x, jsonb_array_elements(x.citations) c
                    WHERE x.subject_id = s.subject_id AND x.summary_id = s.id
                      AND c->>'turn' = ANY($2::text[])))`,
      [subjectId, turnIds, factIds, summaryIds],
    );
    return rows.map((r) => ({ id: r.id, factId: r.fact_id }));
  }

  /** Dropped proposals that cite a forgotten turn (or came from a forgotten session). */
  private droppedCiting(
    subjectId: string,
    turns: readonly TurnRef[],
    sessions: readonly string[],
    scope: PlanScope,
  ): Promise<string[]> {
    if (turns.length === 0 && sessions.length === 0) return Promise.resolve([]);
    const whole = scope.kind === 'session' ? [scope.session] : [];
    return this.ids(
      `SELECT d.id FROM dropped_proposals d
       WHERE d.subject_id = $1 AND (d.session_id = ANY($4::text[]) OR EXISTS (
         SELECT 1 FROM unnest($2::text[], $3::int[]) AS g(session_id, seq)
         WHERE d.session_id = g.session_id AND jsonb_typeof(d.proposal) = 'object'
           AND coalesce(d.proposal #>> '{item,evidence,turn}', d.proposal #>> '{evidence,turn}')
               = g.seq::text))`,
      [subjectId, turns.map((t) => t.session), turns.map((t) => t.seq), whole],
    );
  }

  /**
   * Removes what the plan names, in the forget's transaction (after the owner's forget link, or
   * under a policy, `by`): turns emptied to tombstones and taken out of the recall index, every
   * other row deleted.
   */
  apply(
    subjectId: string,
    forgetId: string,
    t: ForgetTargets,
    at: Date,
    opts: {
      by?: 'request' | 'retention';
      /** Its plan's `requests`: which it answers, and whose phrase it clears. */
      requests?: ForgetPlan['requests'];
    } = {},
  ): Promise<void> {
    const by = opts.by ?? null;
    const answered = opts.requests?.answered ?? [];
    const cleared = [...answered, ...(opts.requests?.scopesCleared ?? [])];
    if (planIsEmpty(t)) return Promise.resolve();
    return guard('forgetting', async () => {
      const db = this.db;
      await db.query(`SELECT set_config('memledger.forgetting', 'on', true)`);
      const sessions: string[] = [];
      const seqs: number[] = [];
      for (const [s, from, to] of t.turns) {
        for (let seq = from; seq <= to; seq++) {
          sessions.push(s);
          seqs.push(seq);
        }
      }
      if (seqs.length > 0) {
        const g = `unnest($2::text[], $3::int[]) AS g(session_id, seq)`;
        await db.query(
          `DELETE FROM turn_vectors v USING ${g}
           WHERE v.subject_id = $1 AND v.session_id = g.session_id AND v.seq = g.seq`,
          [subjectId, sessions, seqs],
        );
        await db.query(UNINDEX_TURNS_SQL, [subjectId, sessions, seqs]);
        await db.query(
          `UPDATE turns t SET content = '', speaker = NULL,
             receipt_kind = CASE WHEN t.role = 'assistant' THEN 'unknown' END,
             receipt_tools = NULL, receipt_sources = NULL,
             terms = CASE WHEN t.terms IS NULL THEN NULL ELSE '{}'::text[] END,
             forget_id = $4, forgotten_at = $5, forgotten_by = $6
           FROM ${g}
           WHERE t.subject_id = $1 AND t.session_id = g.session_id AND t.seq = g.seq`,
          [subjectId, sessions, seqs, forgetId, at, by],
        );
      }
      if (t.sessions.length > 0) {
        await db.query('UPDATE sessions SET title = NULL WHERE subject_id = $1 AND id = ANY($2)', [
          subjectId,
          t.sessions,
        ]);
      }
      await db.query(
        `DELETE FROM reflection_items WHERE subject_id = $1
           AND (fact_id = ANY($2::text[]) OR dropped_id = ANY($3::text[]))`,
        [subjectId, t.facts, t.dropped],
      );
      await db.query(
        'DELETE FROM summary_sentences WHERE subject_id = $1 AND summary_id = ANY($2::text[])',
        [subjectId, t.summaries],
      );
      await db.query('DELETE FROM summaries WHERE subject_id = $1 AND id = ANY($2::text[])', [
        subjectId,
        t.summaries,
      ]);
      await db.query(
        'DELETE FROM fact_vectors WHERE subject_id = $1 AND fact_id = ANY($2::text[])',
        [subjectId, t.facts],
      );
      // facts and their ledger rows name each other: one statement takes both
      await db.query(
        `WITH r AS (DELETE FROM retractions WHERE subject_id = $1 AND id = ANY($3::text[]))
         DELETE FROM facts WHERE subject_id = $1 AND id = ANY($2::text[])`,
        [subjectId, t.facts, t.retractions],
      );
      // requests whose words it removes: their quote cleared (and their phrase, where it holds
      // what is forgotten); only those it answers are honoured, the rest keep their status
      if (t.requests.length > 0) {
        await db.query(
          `UPDATE forget_requests SET quote = '',
             scope = CASE WHEN id = ANY($5::text[]) THEN jsonb_build_object('kind', scope->>'kind')
                          ELSE scope END,
             status = CASE WHEN id = ANY($6::text[]) AND status = 'pending' THEN 'honoured'
                           ELSE status END,
             decided_at = CASE WHEN id = ANY($6::text[]) THEN coalesce(decided_at, $3)
                               ELSE decided_at END,
             forget_id = CASE WHEN id = ANY($6::text[]) AND status <> 'declined'
                              THEN coalesce(forget_id, $4) ELSE forget_id END
           WHERE subject_id = $1 AND id = ANY($2::text[])`,
          [subjectId, t.requests, at, forgetId, cleared, answered],
        );
      }
      for (const [table, list] of [
        ['probe_records', t.probeRecords],
        ['dropped_proposals', t.dropped],
        ['commitments', t.commitments],
        ['actions', t.actions],
      ] as const) {
        if (list.length === 0) continue;
        await db.query(`DELETE FROM ${table} WHERE subject_id = $1 AND id = ANY($2::text[])`, [
          subjectId,
          list,
        ]);
      }
    });
  }
}

/**
 * A retention rule's turns: recorded before $2, not forgotten, and cited by no fact past the pile
 * (one the owner decided, or that went live), nor by a summary such a fact's summary was kept
 * from (`kept`: the summaries whose fact is past the pile, and the versions they were kept
 * from): the owner's signature holds those.
 */
const OLD_TURNS_SQL = `
WITH RECURSIVE kept(id) AS (
  SELECT s.id FROM summaries s JOIN facts f ON f.subject_id = s.subject_id AND f.id = s.fact_id
  WHERE s.subject_id = $1 AND f.status <> 'proposed'
  UNION
  SELECT p.previous_id FROM summaries p JOIN kept ON p.id = kept.id
  WHERE p.subject_id = $1 AND p.previous_id IS NOT NULL),
held AS (
  SELECT evidence_turn_id AS id FROM facts
  WHERE subject_id = $1 AND status <> 'proposed' AND evidence_turn_id IS NOT NULL
  UNION
  SELECT c->>'turn' FROM facts f, jsonb_array_elements(f.evidence_citations) c
  WHERE f.subject_id = $1 AND f.status <> 'proposed' AND f.evidence_citations IS NOT NULL
  UNION
  SELECT c->>'turn' FROM summary_sentences x JOIN kept ON x.summary_id = kept.id,
    jsonb_array_elements(x.citations) c
  WHERE x.subject_id = $1)
SELECT session_id AS session, seq, id FROM turns t
WHERE t.subject_id = $1 AND t.forget_id IS NULL AND t.recorded_at < $2
  AND NOT EXISTS (SELECT 1 FROM held WHERE held.id = t.id)`;

/**
 * Takes turns out of the recall index, as the insert trigger put them in, in one statement (every
 * part reads the index as it was before it): their postings, each term's turn and session counts
 * (a row at zero is deleted), each session's sums and length, and the subject's total length. A
 * forgotten turn stays a document of length 0, as a turn of stopwords is.
 */
const UNINDEX_TURNS_SQL = `
WITH g AS (SELECT * FROM unnest($2::text[], $3::int[]) AS g(session_id, seq)),
gone AS (
  DELETE FROM turn_postings p USING g
  WHERE p.subject_id = $1 AND p.session_id = g.session_id AND p.seq = g.seq
  RETURNING p.term, p.session_id, p.seq, p.tf, p.len),
ps AS (SELECT term, session_id, sum(tf)::int AS tf FROM gone GROUP BY term, session_id),
st AS (
  SELECT s.term, s.session_id, s.tf - ps.tf AS tf_left FROM session_terms s
  JOIN ps ON s.subject_id = $1 AND s.term = ps.term AND s.session_id = ps.session_id),
st_del AS (
  DELETE FROM session_terms s USING st
  WHERE s.subject_id = $1 AND s.term = st.term AND s.session_id = st.session_id
    AND st.tf_left <= 0 RETURNING 1),
st_upd AS (
  UPDATE session_terms s SET tf = st.tf_left FROM st
  WHERE s.subject_id = $1 AND s.term = st.term AND s.session_id = st.session_id
    AND st.tf_left > 0 RETURNING 1),
pt AS (SELECT term, count(*)::int AS df FROM gone GROUP BY term),
emptied AS (SELECT term, count(*)::int AS n FROM st WHERE tf_left <= 0 GROUP BY term),
ts AS (
  SELECT t.term, t.df - pt.df AS df, t.sdf - coalesce(e.n, 0) AS sdf FROM term_stats t
  JOIN pt ON t.subject_id = $1 AND t.term = pt.term
  LEFT JOIN emptied e ON e.term = pt.term),
ts_del AS (
  DELETE FROM term_stats t USING ts
  WHERE t.subject_id = $1 AND t.term = ts.term AND ts.df <= 0 RETURNING 1),
ts_upd AS (
  UPDATE term_stats t SET df = ts.df, sdf = ts.sdf FROM ts
  WHERE t.subject_id = $1 AND t.term = ts.term AND ts.df > 0 RETURNING 1),
lens AS (SELECT session_id, seq, max(len) AS len FROM gone GROUP BY session_id, seq),
sl AS (SELECT session_id, sum(len)::bigint AS len FROM lens GROUP BY session_id),
s_upd AS (
  UPDATE sessions s SET term_len = s.term_len - sl.len FROM sl
  WHERE s.subject_id = $1 AND s.id = sl.session_id RETURNING 1),
c_upd AS (
  UPDATE recall_corpus c SET term_len = c.term_len - (SELECT coalesce(sum(len), 0) FROM sl)
  WHERE c.subject_id = $1 RETURNING 1)
SELECT (SELECT count(*) FROM st_del) + (SELECT count(*) FROM st_upd)
     + (SELECT count(*) FROM ts_del) + (SELECT count(*) FROM ts_upd)
     + (SELECT count(*) FROM s_upd) + (SELECT count(*) FROM c_upd) AS touched`;

/** The tables a forget can leave dead row versions of forgotten text in. */
export const FORGET_TABLES = [
  'turns',
  'turn_postings',
  'term_stats',
  'session_terms',
  'sessions',
  'turn_vectors',
  'fact_vectors',
  'facts',
  'retractions',
  'summaries',
  'summary_sentences',
  'reflection_items',
  'dropped_proposals',
  'probe_records',
  'commitments',
  'actions',
  'forget_requests',
] as const;

/** What `scrubForgotten` did, for the forget's report. */
export interface ScrubReport {
  /** Tables rewritten (VACUUM FULL): no dead row version of them is left in their files. */
  rewritten: string[];
  /** Whether the planner's statistics were rebuilt and their old versions removed. */
  statistics: boolean;
  /** Whether the write-ahead log holding the forgotten text was removed (embedded store). */
  walCleared: boolean;
  /**
   * Why removing the bytes failed after the forget committed (a lock, the disk): the rows are
   * gone, their dead versions are not yet; the next forget's rewrite removes them.
   */
  failed?: string;
}

/**
 * Removes the bytes of what a committed forget deleted: every table it touched is rewritten
 * (VACUUM FULL: no dead row version, in table, TOAST or index files), the planner's statistics are
 * taken again and their old versions removed (a histogram can hold a column's values), and, on
 * the embedded store, the write-ahead log segments that still hold them are removed (a switch to
 * a new segment, and a checkpoint that deletes old ones instead of recycling them). Where the
 * server does not let this role rewrite the statistics catalog, `statistics` is false.
 */
/**
 * `scrubForgotten` after a forget committed: a failure (a lock, the disk) is the report's
 * `failed`, not the forget's: its rows are gone, their dead versions are not yet, and the next
 * forget's rewrite removes them.
 */
export function scrubAfterForget(client: SqlClient): Promise<ScrubReport> {
  return scrubForgotten(client).catch((err: unknown): ScrubReport => ({
    rewritten: [],
    statistics: false,
    walCleared: false,
    failed: err instanceof Error ? err.message : String(err),
  }));
}

export function scrubForgotten(client: SqlClient): Promise<ScrubReport> {
  // one rewrite at a time per store client, and callers that arrive meanwhile share the next one
  // (it starts after their forgets committed): a burst of forgets costs two rewrites, not one each
  let st = scrubs.get(client);
  if (st === undefined) {
    st = { running: null, queued: null };
    scrubs.set(client, st);
  }
  const s = st;
  if (s.running === null) {
    s.running = scrubOnce(client).finally(() => {
      s.running = null;
    });
    return s.running;
  }
  s.queued ??= s.running
    .catch(() => undefined)
    .then(() => {
      s.queued = null;
      return scrubForgotten(client);
    });
  return s.queued;
}

const scrubs = new WeakMap<
  SqlClient,
  { running: Promise<ScrubReport> | null; queued: Promise<ScrubReport> | null }
>();

function scrubOnce(client: SqlClient): Promise<ScrubReport> {
  const tables = FORGET_TABLES;
  return guard('removing forgotten bytes', async () => {
    const list = tables.join(', ');
    await client.exec(`VACUUM FULL ${list}`);
    await client.exec(`ANALYZE ${list}`);
    // only a superuser may rewrite the catalog (another role's VACUUM skips it with a warning)
    const { rows } = await client.query<{ s: boolean }>(
      'SELECT usesuper AS s FROM pg_catalog.pg_user WHERE usename = current_user',
    );
    const statistics = rows[0]?.s === true;
    if (statistics) await client.exec('VACUUM FULL pg_catalog.pg_statistic');
    let walCleared = false;
    if (client.kind === 'pglite') {
      await client.exec('SET wal_recycle = off');
      try {
        for (let i = 0; i < 2; i++) {
          await client.query('SELECT pg_catalog.pg_switch_wal()');
          await client.exec('CHECKPOINT');
        }
        walCleared = true;
      } finally {
        await client.exec('RESET wal_recycle');
      }
    }
    return { rewritten: [...tables], statistics, walCleared };
  });
}
