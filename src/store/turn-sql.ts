import { INPUT_LIMITS } from '../domain/input.js';
import type { Receipt, ReceiptKind } from '../domain/receipt.js';
import type { Turn, TurnRole } from '../domain/turn.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

/** A turn as the recorder writes it; the store assigns its seq. */
export interface NewTurnRow {
  id: string;
  subjectId: string;
  sessionId: string;
  role: TurnRole;
  content: string;
  corrective: boolean;
  receipt: Receipt | null;
  at: Date;
  speaker: string | null;
  /** Analysed terms of speaker and content, for the recall index. */
  terms: readonly string[];
}

interface TurnDbRow {
  id: string;
  subject_id: string;
  session_id: string;
  seq: number;
  role: TurnRole;
  content: string;
  corrective: boolean;
  receipt_kind: ReceiptKind | null;
  receipt_tools: string[] | null;
  receipt_sources: string[] | null;
  recorded_at: Date;
  speaker: string | null;
  forget_id: string | null;
  forgotten_at: Date | null;
  forgotten_by: 'request' | 'retention' | null;
}

/** A receipt from its stored columns: the inverse of `receiptColumns`. */
export function receiptFromColumns(
  kind: ReceiptKind | null,
  tools: string[] | null,
  sources: string[] | null,
): Receipt | null {
  switch (kind) {
    case null:
      return null;
    case 'tools':
      return { kind: 'tools', tools: tools ?? [], sources: sources ?? [] };
    case 'none':
      return { kind: 'none' };
    case 'unknown':
      return { kind: 'unknown' };
  }
}

function toReceipt(row: TurnDbRow): Receipt | null {
  return receiptFromColumns(row.receipt_kind, row.receipt_tools, row.receipt_sources);
}

function toTurn(row: TurnDbRow): Turn {
  return {
    id: row.id,
    subjectId: row.subject_id,
    sessionId: row.session_id,
    seq: row.seq,
    role: row.role,
    content: row.content,
    corrective: row.corrective,
    receipt: toReceipt(row),
    recordedAt: row.recorded_at,
    speaker: row.speaker,
    ...(row.forget_id === null || row.forgotten_at === null
      ? {}
      : {
          forgotten: {
            at: row.forgotten_at,
            forgetId: row.forget_id,
            by: row.forgotten_by ?? 'owner',
          },
        }),
  };
}

/** Receipt columns as stored: lists only for "tools ran". */
export function receiptColumns(
  receipt: Receipt | null,
): [string | null, string[] | null, string[] | null] {
  if (receipt === null) return [null, null, null];
  if (receipt.kind === 'tools') return ['tools', receipt.tools, receipt.sources];
  return [receipt.kind, null, null];
}

const COLUMNS = `id, subject_id, session_id, seq, role, content, corrective,
  receipt_kind, receipt_tools, receipt_sources, recorded_at, speaker, forget_id, forgotten_at,
  forgotten_by`;

/**
 * Taking the next seq and inserting the turn is one statement: the session row's lock
 * serialises concurrent writers, and a failed insert leaves the counter unchanged. The session
 * is named by its subject and id ($12, $1): a session id is unique only per subject.
 */
export const INSERT_TURN_SQL = `
WITH s AS (
  UPDATE sessions SET last_seq = last_seq + 1, last_turn_at = $9,
                      term_len = term_len + cardinality($11::text[])
  WHERE subject_id = $12 AND id = $1
  RETURNING subject_id, id, last_seq
)
INSERT INTO turns AS t (subject_id, session_id, seq, id, role, content, corrective,
                   receipt_kind, receipt_tools, receipt_sources, recorded_at, speaker, terms)
SELECT s.subject_id, s.id, s.last_seq, $2, $3, $4, $5, $6, $7::text[], $8::text[], $9, $10,
       $11::text[] FROM s
RETURNING t.subject_id, t.seq,
  (SELECT c.turns FROM recall_corpus c WHERE c.subject_id = t.subject_id)::float8 AS indexed,
  pg_catalog.pg_current_xact_id()::text AS xid`;

/** Turns (append-only): recorded with the next seq of their session, read in order. */
export class TurnSql {
  constructor(private readonly db: SqlExecutor) {}

  /**
   * Returns null when the subject has no such session. `indexedBefore`: the subject's indexed turns
   * before this one (for store maintenance); `xid`: the transaction that wrote it.
   */
  insert(turn: NewTurnRow): Promise<{ turn: Turn; indexedBefore: number; xid: string } | null> {
    return guard('recording a turn', async () => {
      // Only what the database decides comes back (subject and seq); the rest is what was sent.
      const { rows } = await this.db.query<{
        subject_id: string;
        seq: number;
        indexed: number | null;
        xid: string;
      }>(INSERT_TURN_SQL, [
        turn.sessionId,
        turn.id,
        turn.role,
        turn.content,
        turn.corrective,
        ...receiptColumns(turn.receipt),
        turn.at,
        turn.speaker,
        turn.terms,
        turn.subjectId,
      ]);
      const row = rows[0];
      if (row === undefined) return null;
      return {
        indexedBefore: row.indexed ?? 0,
        xid: row.xid,
        turn: {
          id: turn.id,
          subjectId: row.subject_id,
          sessionId: turn.sessionId,
          seq: row.seq,
          role: turn.role,
          content: turn.content,
          corrective: turn.corrective,
          receipt: turn.receipt,
          recordedAt: turn.at,
          speaker: turn.speaker,
        },
      };
    });
  }

  /** A session's turns in order: after `afterSeq`, up to `throughSeq` inclusive, `limit` at most. */
  listBySession(
    subjectId: string,
    sessionId: string,
    options: { afterSeq?: number; throughSeq?: number; limit?: number } = {},
  ): Promise<Turn[]> {
    return guard('reading history', async () => {
      const { rows } = await this.db.query<TurnDbRow>(
        `SELECT ${COLUMNS} FROM turns t
         WHERE t.subject_id = $1 AND t.session_id = $2 AND t.seq > $3 AND t.seq <= $5
         ORDER BY t.seq
         LIMIT $4`,
        [
          subjectId,
          sessionId,
          options.afterSeq ?? 0,
          options.limit ?? 1_000_000,
          options.throughSeq ?? INPUT_LIMITS.maxInt,
        ],
      );
      return rows.map(toTurn);
    });
  }

  /** The most recent turns of one subject's session, oldest first. */
  lastBySession(subjectId: string, sessionId: string, count: number): Promise<Turn[]> {
    return guard('reading history', async () => {
      const { rows } = await this.db.query<TurnDbRow>(
        `SELECT * FROM (
           SELECT ${COLUMNS} FROM turns WHERE subject_id = $1 AND session_id = $2
           ORDER BY seq DESC LIMIT $3
         ) recent ORDER BY seq`,
        [subjectId, sessionId, count],
      );
      return rows.map(toTurn);
    });
  }
}
