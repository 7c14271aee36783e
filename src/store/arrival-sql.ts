import type { ArrivalManifest } from '../domain/manifest.js';
import type { SettledSnapshot } from '../domain/settled-snapshot.js';
import type { SqlClient } from './sql-client.js';
import { guard } from './store-error.js';

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

  /** `YYYY-MM-DD HH24:MI (Dy)` in the zone. */
  formatTime(at: Date, zone: string): Promise<string> {
    return guard('formatting the time', async () => {
      const { rows } = await this.db.query<{ t: string }>(
        `SELECT to_char($1::timestamptz AT TIME ZONE $2, 'YYYY-MM-DD HH24:MI (Dy)') AS t`,
        [at, zone],
      );
      return rows[0]?.t ?? '';
    });
  }

  /** The settled-facts block's reads, dates formatted in the zone. */
  async settled(subjectId: string, now: Date, zone: string): Promise<SettledSnapshot> {
    return guard('reading settled facts', async () => {
      const since = new Date(now.getTime() - 48 * 3_600_000);
      const [latest, total, actions, retractions, due, pile] = await Promise.all([
        this.db.query<{ title: string; due: string | null }>(
          `SELECT title, to_char(due_date, 'YYYY-MM-DD') AS due FROM commitments
           WHERE subject_id = $1 AND status = 'open' ORDER BY created_at DESC, id DESC LIMIT 3`,
          [subjectId],
        ),
        // The true count, never the length of the LIMIT 3 slice above.
        this.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM commitments WHERE subject_id = $1 AND status = 'open'`,
          [subjectId],
        ),
        this.db.query<{ tool: string; surface: string; target: string; completed: string }>(
          `SELECT tool, surface, target_summary AS target,
                  to_char(completed_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI') AS completed
           FROM actions WHERE subject_id = $1 AND status = 'confirmed' AND completed_at > $2 AND completed_at <= $4
           ORDER BY completed_at DESC, id DESC LIMIT 3`,
          [subjectId, since, zone, now],
        ),
        this.db.query<{ claim: string; corrected: string; verdict: string }>(
          `SELECT claim, corrected_claim AS corrected, verdict FROM retractions
           WHERE subject_id = $1 ORDER BY corrected_at DESC, id DESC LIMIT 3`,
          [subjectId],
        ),
        this.db.query<{ n: number; oldest: string | null }>(
          `SELECT count(*)::int AS n, to_char(min(due_at) AT TIME ZONE $3, 'YYYY-MM-DD') AS oldest
           FROM retractions WHERE subject_id = $1 AND verdict = 'unchecked' AND due_at <= $2`,
          [subjectId, now, zone],
        ),
        // the pile by the gate's verdict: what waits, and how much of it its quote does not state
        this.db.query<{ n: number; hours: number | null; verdicts: Record<string, number> | null }>(
          `SELECT sum(n)::int AS n,
                  (extract(epoch FROM ($2::timestamptz - min(oldest))) / 3600)::float8 AS hours,
                  json_object_agg(v, n) AS verdicts
           FROM (SELECT COALESCE(attestation, CASE WHEN attested THEN 'attested' ELSE 'unattested' END) AS v,
                        count(*)::int AS n, min(recorded_at) AS oldest
                 FROM facts WHERE subject_id = $1 AND status = 'proposed' GROUP BY 1) x`,
          [subjectId, now],
        ),
      ]);
      return {
        openCommitments: { total: total.rows[0]?.n ?? 0, latest: latest.rows },
        confirmedActions: actions.rows,
        retractions: retractions.rows,
        falsifiersDue: { count: due.rows[0]?.n ?? 0, oldestDue: due.rows[0]?.oldest ?? null },
        pile: {
          count: pile.rows[0]?.n ?? 0,
          oldestHours: pile.rows[0]?.hours ?? null,
          verdicts: pile.rows[0]?.verdicts ?? {},
        },
      };
    });
  }

  /** The subject's most recently active sessions, other than `exceptSession`. */
  recentSessions(
    subjectId: string,
    exceptSession: string | null,
    zone: string,
    limit: number,
  ): Promise<Array<{ id: string; title: string | null; turns: number; last: string | null }>> {
    return guard('reading recent sessions', async () => {
      const { rows } = await this.db.query<{
        id: string;
        title: string | null;
        turns: number;
        last: string | null;
      }>(
        `SELECT id, title, last_seq AS turns,
                to_char(last_turn_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI') AS last
         FROM sessions
         WHERE subject_id = $1 AND ($2::text IS NULL OR id <> $2)
         ORDER BY coalesce(last_turn_at, created_at) DESC, id DESC LIMIT $4`,
        [subjectId, exceptSession, zone, limit],
      );
      return rows;
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
         RETURNING pg_current_xact_id()::text AS xid`,
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
