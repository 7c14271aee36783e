import type { ArrivalManifest } from '../domain/manifest.js';
import type { SettledSnapshot } from '../domain/settled-snapshot.js';
import type { ServerSnapshot } from '../domain/trust.js';
import type { SqlClient } from './sql-client.js';
import { guard } from './store-error.js';
import { BOUND_TOOLS_SQL } from './tool-sql.js';
import { SERVER_SNAPSHOT_COLUMNS, serverSnapshotOf } from './server-snapshot.js';

interface ManifestRow {
  id: string;
  subject_id: string;
  surface: string;
  session_id: string | null;
  blocks: ArrivalManifest['blocks'];
  tools: string[];
  tool_count: number;
  degraded: string[];
  total_chars: number;
  created_at: Date;
  chain_length: number | null;
  chain_head: string | null;
}

const MANIFEST_COLUMNS = `id, subject_id, surface, session_id, blocks, tools, tool_count, degraded, total_chars,
  created_at, chain_length, chain_head`;

function toManifest(r: ManifestRow): ArrivalManifest {
  return {
    id: r.id,
    subjectId: r.subject_id,
    surface: r.surface,
    sessionId: r.session_id,
    blocks:
      typeof r.blocks === 'string' ? (JSON.parse(r.blocks) as ArrivalManifest['blocks']) : r.blocks,
    tools: r.tools,
    toolCount: r.tool_count,
    degraded: r.degraded,
    totalChars: r.total_chars,
    createdAt: r.created_at,
    chain:
      r.chain_length === null || r.chain_head === null
        ? null
        : { length: r.chain_length, head: r.chain_head },
  };
}

/** What an arrival opens with (ArrivalSql.opening). */
export interface ArrivalOpening {
  zone: string | null;
  tools: string[];
  sessionTurns: number | null;
  /** The server's snapshot as this statement saw it: the arrival's trust view checks against it. */
  snapshot: ServerSnapshot;
}

/** A session as the recent-sessions block lists it. */
export interface RecentSession {
  id: string;
  title: string | null;
  turns: number;
  /** When its last turn was recorded, `YYYY-MM-DD HH24:MI` in the zone (null: no turn yet). */
  last: string | null;
}

/** What the arrival's "now" blocks show (ArrivalSql.now). */
export interface ArrivalNow {
  settled: SettledSnapshot;
  /**
   * The pending proposals and their cited turns as row versions (a digest): the same mark means
   * the same stored proposals and turns, so verdicts read again from them still hold.
   */
  pileMark: string | null;
  recent: RecentSession[];
  clock: string;
}

/** A pending proposal as its quote verdict is read again from (ArrivalSql.pendingQuotes). */
export interface PendingQuote {
  /** Its row version and its cited turn's: a verdict read under the same key still holds. */
  key: string;
  origin: string;
  text: string;
  quote: string | null;
  attested: boolean;
  /** The verdict stored with it (null: stored before typed attestation, or none given). */
  stored: string | null;
  /** The cited turn; its words null when the caller knew the key (not sent again). */
  cited: { role: string; content: string | null } | null;
}

/** What the "now" statement gives: the parts as JSON arrays, counts as integers. */
interface NowRow {
  latest: Array<[string, string | null]> | null;
  open_total: number | null;
  actions: Array<[string, string, string, string]> | null;
  retractions: Array<[string, string, string, string]> | null;
  due_count: number | null;
  due_oldest: string | null;
  pile_count: number | null;
  pile_hours: number | null;
  pile_verdicts: Record<string, number> | null;
  pile_mark: string | null;
  recent: Array<[string, string | null, number, string | null]> | null;
  clock: string | null;
}

/**
 * The arrival's "now" ($1 subject, $2 now, $3 zone, $4 48 hours before now, $5 the arrival's
 * session, $6 how many recent sessions): the latest open commitments and their true count (never
 * the length of the LIMIT 3 slice), confirmed actions of the last 48 hours, the latest
 * retractions, the falsifiers due, the pile by the gate's verdict (what waits, and how much of it
 * its quote does not state), the most recently active other sessions, and the clock.
 *
 * The statement is prepared, so PostgreSQL runs it on a generic plan, which guesses at the
 * parameters; it is written so that the guess cannot make it scan: dates are formatted after each
 * LIMIT (not for every row sorted); the actions' 48-hour bound is applied to the 3 latest up to
 * now (the same rows: the ones inside the window come first), so the plan walks the index back
 * from now; and the arrival's own session is left out of the recent sessions after the sort
 * (the sort takes one more), not compared on every session of the subject.
 */
const NOW_SQL = `SELECT
  (SELECT json_agg(json_build_array(title, due) ORDER BY created_at DESC, id DESC)
   FROM (SELECT title, to_char(due_date, 'YYYY-MM-DD') AS due, created_at, id FROM commitments
         WHERE subject_id = $1 AND status = 'open' ORDER BY created_at DESC, id DESC LIMIT 3) c)
    AS latest,
  (SELECT count(*)::int FROM commitments WHERE subject_id = $1 AND status = 'open') AS open_total,
  (SELECT json_agg(json_build_array(tool, surface, target,
                                    to_char(completed_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI'))
                   ORDER BY completed_at DESC, id DESC)
   FROM (SELECT tool, surface, target_summary AS target, completed_at, id
         FROM actions
         WHERE subject_id = $1 AND status = 'confirmed' AND completed_at <= $2
         ORDER BY completed_at DESC, id DESC LIMIT 3) a
   WHERE completed_at > $4) AS actions,
  (SELECT json_agg(json_build_array(claim, corrected_claim, verdict, id)
                   ORDER BY corrected_at DESC, id DESC)
   FROM (SELECT claim, corrected_claim, verdict, corrected_at, id FROM retractions
         WHERE subject_id = $1 ORDER BY corrected_at DESC, id DESC LIMIT 12) r) AS retractions,
  (SELECT json_agg(json_build_array(id, title, last_seq,
                                    to_char(last_turn_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI'))
                   ORDER BY coalesce(last_turn_at, created_at) DESC, id DESC)
   FROM (SELECT * FROM (SELECT id, title, last_seq, last_turn_at, created_at
                        FROM sessions WHERE subject_id = $1
                        ORDER BY coalesce(last_turn_at, created_at) DESC, id DESC LIMIT $6 + 1) s0
         WHERE $5::text IS NULL OR id <> $5::text
         ORDER BY coalesce(last_turn_at, created_at) DESC, id DESC LIMIT $6) s) AS recent,
  to_char($2::timestamptz AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI (Dy)') AS clock,
  d.due_count, d.due_oldest, p.pile_count, p.pile_hours, p.pile_verdicts, pm.pile_mark
FROM (SELECT count(*)::int AS due_count,
             to_char(min(due_at) AT TIME ZONE $3, 'YYYY-MM-DD') AS due_oldest
      FROM retractions WHERE subject_id = $1 AND verdict = 'unchecked' AND due_at <= $2) d,
     (SELECT sum(n)::int AS pile_count,
             (extract(epoch FROM ($2::timestamptz - min(oldest))) / 3600)::float8 AS pile_hours,
             json_object_agg(v, n) AS pile_verdicts
      FROM (SELECT COALESCE(attestation,
                            CASE WHEN attested THEN 'attested' ELSE 'unattested' END) AS v,
                   count(*)::int AS n, min(recorded_at) AS oldest
            FROM facts WHERE subject_id = $1 AND status = 'proposed' GROUP BY 1) x) p,
     (SELECT md5(string_agg(f.id || '@' || f.xmin::text || '@' || coalesce(t.xmin::text, '-'),
                            ',' ORDER BY f.id)) AS pile_mark
      FROM facts f
      LEFT JOIN turns t ON t.subject_id = f.subject_id AND t.session_id = f.evidence_session_id
                       AND t.seq = f.evidence_seq
      WHERE f.subject_id = $1 AND f.status = 'proposed') pm`;

/**
 * The reads arrival makes. Every date is formatted here, at the SQL boundary, in the subject's
 * zone (`to_char(… AT TIME ZONE $zone)`; DATE columns with plain `to_char`): a DATE never passes
 * through a local-midnight JS Date (seed 000's day-one bug rendered 2026-10-21 for 2026-10-22).
 */
export class ArrivalSql {
  constructor(private readonly db: SqlClient) {}

  /** The subject's own time zone; null when none is set. */
  timeZone(subjectId: string): Promise<string | null> {
    return guard('reading the time zone', async () => {
      const { rows } = await this.db.query<{ time_zone: string | null }>(
        'SELECT time_zone FROM subjects WHERE id = $1',
        [subjectId],
      );
      return rows[0]?.time_zone ?? null;
    });
  }

  /**
   * What assemble reads before its blocks, in one statement: the subject's zone (null: none set),
   * the tools bound on the surface (ToolSql.toolsFor), how many turns the session holds (null:
   * no session asked, or none of the subject's by that id), and the server's snapshot (the
   * arrival's trust view needs no statement of its own to learn that nothing was written since
   * the view it keeps).
   */
  opening(subjectId: string, surface: string, sessionId: string | null): Promise<ArrivalOpening> {
    return guard('reading what an arrival opens with', async () => {
      const { rows } = await this.db.query<
        {
          zone: string | null;
          tools: string[] | null;
          turns: number | null;
        } & ServerSnapshot
      >(
        `SELECT (SELECT time_zone FROM subjects WHERE id = $1) AS zone,
                ARRAY(${BOUND_TOOLS_SQL}) AS tools,
                (SELECT last_seq FROM sessions WHERE subject_id = $1 AND id = $3) AS turns,
                ${SERVER_SNAPSHOT_COLUMNS}`,
        [subjectId, surface, sessionId],
        { prepare: true },
      );
      const r = rows[0];
      return {
        zone: r?.zone ?? null,
        tools: r?.tools ?? [],
        sessionTurns: r?.turns ?? null,
        snapshot: serverSnapshotOf(r),
      };
    });
  }

  /** Whether the database knows the zone (PGlite and PostgreSQL ship the tz database). */
  knowsZone(zone: string): Promise<boolean> {
    return guard('checking a time zone', async () => {
      const { rows } = await this.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_timezone_names WHERE name = $1',
        [zone],
      );
      return (rows[0]?.n ?? 0) > 0;
    });
  }

  /** Sets or clears (null) the subject's time zone. */
  setTimeZone(subjectId: string, zone: string | null): Promise<void> {
    return guard('setting the time zone', async () => {
      await this.db.query('UPDATE subjects SET time_zone = $2 WHERE id = $1', [subjectId, zone]);
    });
  }

  /**
   * What the arrival's "now" blocks show, as of `now` in `zone`, in one statement (one snapshot,
   * one round trip, one zone for every date): the settled facts, the `recentLimit` most recently
   * active sessions other than `exceptSession`, and the clock (`YYYY-MM-DD HH24:MI (Dy)`).
   */
  now(
    subjectId: string,
    exceptSession: string | null,
    now: Date,
    zone: string,
    recentLimit: number,
  ): Promise<ArrivalNow> {
    return guard('reading settled facts', async () => {
      const since = new Date(now.getTime() - 48 * 3_600_000);
      const { rows } = await this.db.query<NowRow>(
        NOW_SQL,
        [subjectId, now, zone, since, exceptSession, recentLimit],
        { prepare: true },
      );
      const r = rows[0];
      return {
        settled: {
          openCommitments: {
            total: r?.open_total ?? 0,
            latest: (r?.latest ?? []).map(([title, due]) => ({ title, due })),
          },
          confirmedActions: (r?.actions ?? []).map(([tool, surface, target, completed]) => ({
            tool,
            surface,
            target,
            completed,
          })),
          retractions: (r?.retractions ?? []).map(([claim, corrected, verdict, id]) => ({
            id,
            claim,
            corrected,
            verdict,
          })),
          falsifiersDue: { count: r?.due_count ?? 0, oldestDue: r?.due_oldest ?? null },
          pile: {
            count: r?.pile_count ?? 0,
            oldestHours: r?.pile_hours ?? null,
            verdicts: r?.pile_verdicts ?? {},
          },
        },
        recent: (r?.recent ?? []).map(([id, title, turns, last]) => ({ id, title, turns, last })),
        clock: r?.clock ?? '',
        pileMark: r?.pile_mark ?? null,
      };
    });
  }

  /**
   * The pending proposals with what their quote verdict is read from, each under a key of its row
   * version and its cited turn's (`id@version@turnVersion`), and the mark of them all
   * (`ArrivalNow.pileMark`), in one statement. The cited turn's words come back only for keys not
   * in `known` (a verdict kept from an earlier read holds while the key is the same).
   */
  pendingQuotes(
    subjectId: string,
    known: readonly string[],
  ): Promise<{ mark: string | null; items: PendingQuote[] }> {
    return guard('reading the pile', async () => {
      const { rows } = await this.db.query<{
        key: string;
        text: string;
        origin: string;
        attested: boolean;
        attestation: string | null;
        quote: string | null;
        role: string | null;
        content: string | null;
        mark: string | null;
      }>(
        `SELECT q.key, q.text, q.origin, q.attested, q.attestation, q.quote, q.role,
                CASE WHEN q.key = ANY($2::text[]) THEN NULL ELSE q.content END AS content,
                md5(string_agg(q.key, ',') OVER (ORDER BY q.id ROWS BETWEEN UNBOUNDED PRECEDING
                                                 AND UNBOUNDED FOLLOWING)) AS mark
         FROM (SELECT f.id, f.id || '@' || f.xmin::text || '@' || coalesce(t.xmin::text, '-') AS key,
                      f.text, f.origin, f.attested, f.attestation, f.evidence_quote AS quote,
                      t.role, t.content
               FROM facts f
               LEFT JOIN turns t ON t.subject_id = f.subject_id
                                AND t.session_id = f.evidence_session_id AND t.seq = f.evidence_seq
               WHERE f.subject_id = $1 AND f.status = 'proposed') q
         ORDER BY q.id`,
        [subjectId, known],
      );
      return {
        mark: rows[0]?.mark ?? null,
        items: rows.map((r) => ({
          key: r.key,
          origin: r.origin,
          text: r.text,
          quote: r.quote,
          attested: r.attested,
          stored: r.attestation,
          cited: r.role === null ? null : { role: r.role, content: r.content },
        })),
      };
    });
  }

  /**
   * Appends an arrival's manifest in one statement on its own; returns the transaction that wrote
   * it (its xid). The manifest is a record of what was given, not a decision: a crash may lose the
   * last one, so its commit does not wait for the disk flush (set_config local to the statement's
   * own transaction, read when it commits; about half a 10 ms arrival budget otherwise).
   */
  recordManifest(m: ArrivalManifest): Promise<string> {
    return guard('recording the arrival manifest', async () => {
      const { rows } = await this.db.query<{ xid: string }>(
        `WITH flush AS (SELECT set_config('synchronous_commit', 'off', true))
         INSERT INTO arrival_manifests (subject_id, id, surface, session_id, blocks, tools,
                                        tool_count, degraded, total_chars, created_at,
                                        chain_length, chain_head)
         SELECT $1, $2, $3, $4, $5::jsonb, $6::text[], $7, $8::text[], $9, $10, $11, $12 FROM flush
         RETURNING pg_catalog.pg_current_xact_id()::text AS xid`,
        [
          m.subjectId,
          m.id,
          m.surface,
          m.sessionId,
          JSON.stringify(m.blocks),
          m.tools,
          m.toolCount,
          m.degraded,
          m.totalChars,
          m.createdAt,
          m.chain?.length ?? null,
          m.chain?.head ?? null,
        ],
        { prepare: true },
      );
      return rows[0]?.xid ?? '';
    });
  }

  /** The subject's manifest by id; another subject's reads as none. */
  manifest(subjectId: string, id: string): Promise<ArrivalManifest | null> {
    return guard('reading a manifest', async () => {
      const { rows } = await this.db.query<ManifestRow>(
        `SELECT ${MANIFEST_COLUMNS} FROM arrival_manifests WHERE subject_id = $1 AND id = $2`,
        [subjectId, id],
      );
      return rows[0] === undefined ? null : toManifest(rows[0]);
    });
  }

  /** The latest manifest on a surface, or the one before `before`. */
  previousManifest(
    subjectId: string,
    surface: string,
    before: ArrivalManifest | null,
  ): Promise<ArrivalManifest | null> {
    return guard('reading a manifest', async () => {
      const { rows } = await this.db.query<ManifestRow>(
        `SELECT ${MANIFEST_COLUMNS} FROM arrival_manifests
         WHERE subject_id = $1 AND surface = $2
           AND ($3::text IS NULL
                OR seq < (SELECT seq FROM arrival_manifests WHERE subject_id = $1 AND id = $3))
         ORDER BY seq DESC LIMIT 1`,
        [subjectId, surface, before?.id ?? null],
      );
      return rows[0] === undefined ? null : toManifest(rows[0]);
    });
  }

  /**
   * One page of the subject's manifests, newest first (by arrival order), optionally of one
   * surface, and how many there are in all: both read from one snapshot.
   */
  manifests(
    subjectId: string,
    surface: string | null,
    page: { limit: number; offset: number },
  ): Promise<{ total: number; manifests: ArrivalManifest[] }> {
    return guard('reading manifests', () =>
      this.db.transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        const count = await tx.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM arrival_manifests
           WHERE subject_id = $1 AND ($2::text IS NULL OR surface = $2)`,
          [subjectId, surface],
        );
        const { rows } = await tx.query<ManifestRow>(
          `SELECT ${MANIFEST_COLUMNS} FROM arrival_manifests
           WHERE subject_id = $1 AND ($2::text IS NULL OR surface = $2)
           ORDER BY seq DESC LIMIT $3 OFFSET $4`,
          [subjectId, surface, page.limit, page.offset],
        );
        return { total: count.rows[0]?.n ?? 0, manifests: rows.map(toManifest) };
      }),
    );
  }
}
