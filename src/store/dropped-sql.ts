import { createHash } from 'node:crypto';
import {
  DROPPED_LIMITS,
  encodeJson,
  renderBounded,
  storableString,
  type DroppedDay,
  type DroppedDigest,
  type DroppedProposal,
  type FieldDigest,
  type NewDroppedProposal,
} from '../domain/dropped-proposal.js';
import { hasLoneSurrogate } from '../domain/input.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

interface DroppedDbRow {
  id: string;
  session_id: string | null;
  slot: string;
  text: string;
  proposal: unknown;
  code: string;
  reason: string;
  proposed_by: string;
  dropped_at: Date;
}

/** Marks the `proposal` column's envelope: `{ [ENVELOPE]: 1, item, digest }`. */
const ENVELOPE = 'memledger.dropped';

/** UTF-8, or WTF-8 for a string with a lone surrogate (encoded like any other code point). */
function wtf8(value: string): Buffer {
  if (!hasLoneSurrogate(value)) return Buffer.from(value, 'utf8');
  const bytes: number[] = [];
  for (const ch of value) {
    const cp = ch.codePointAt(0) as number;
    if (cp < 0x80) bytes.push(cp);
    else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
    else if (cp < 0x10000) {
      bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    } else {
      bytes.push(
        0xf0 | (cp >> 18),
        0x80 | ((cp >> 12) & 0x3f),
        0x80 | ((cp >> 6) & 0x3f),
        0x80 | (cp & 0x3f),
      );
    }
  }
  return Buffer.from(bytes);
}

function fieldDigest(value: string): FieldDigest {
  return { length: value.length, sha256: createHash('sha256').update(wtf8(value)).digest('hex') };
}

function proposalDigest(value: unknown): FieldDigest {
  const hash = createHash('sha256');
  let length = 0;
  const problem = encodeJson(value, (piece) => {
    length += piece.length;
    hash.update(piece, 'utf8');
  });
  return problem === null
    ? { length, sha256: hash.digest('hex') }
    : { length: 0, sha256: null, unencodable: problem };
}

/** The row a drop is stored as: every text bounded and storable, the full fields' digests. */
export function boundDropped(d: NewDroppedProposal): {
  slot: string;
  text: string;
  reason: string;
  proposedBy: string;
  proposal: Record<string, unknown>;
} {
  const slot = storableString(d.slot, DROPPED_LIMITS.prefix);
  const text = storableString(d.text, DROPPED_LIMITS.prefix);
  const item = renderBounded(d.proposal);
  const digest: DroppedDigest = {
    truncated: slot.changed || text.changed || item.changed,
    slot: fieldDigest(d.slot),
    text: fieldDigest(d.text),
    proposal: proposalDigest(d.proposal),
  };
  return {
    slot: slot.text,
    text: text.text,
    reason: storableString(d.reason, DROPPED_LIMITS.prefix).text,
    proposedBy: storableString(d.proposedBy, DROPPED_LIMITS.prefix).text,
    proposal: { [ENVELOPE]: 1, item: item.value, digest },
  };
}

function unwrap(stored: unknown): { proposal: unknown; digest: DroppedDigest | null } {
  if (stored !== null && typeof stored === 'object' && !Array.isArray(stored)) {
    const o = stored as Record<string, unknown>;
    if (o[ENVELOPE] === 1) return { proposal: o.item, digest: o.digest as DroppedDigest };
  }
  // Logged before digests were kept: the item exactly as it arrived.
  return { proposal: stored, digest: null };
}

/** The gate's log of dropped proposals (append-only), each field bounded (`DROPPED_LIMITS`). */
export class DroppedSql {
  constructor(private readonly db: SqlExecutor) {}

  insert(subjectId: string, d: NewDroppedProposal): Promise<void> {
    return guard('logging a dropped proposal', async () => {
      const row = boundDropped(d);
      await this.db.query(
        `INSERT INTO dropped_proposals
           (subject_id, id, session_id, slot, text, proposal, code, reason, proposed_by, dropped_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10)`,
        [
          subjectId,
          d.id,
          d.sessionId,
          row.slot,
          row.text,
          JSON.stringify(row.proposal),
          d.code,
          row.reason,
          row.proposedBy,
          d.droppedAt,
        ],
      );
    });
  }

  /** One page of the log, newest first. */
  list(subjectId: string, page: { limit: number; offset: number }): Promise<DroppedProposal[]> {
    return guard('reading the dropped log', async () => {
      const { rows } = await this.db.query<DroppedDbRow>(
        `SELECT id, session_id, slot, text, proposal, code, reason, proposed_by, dropped_at
         FROM dropped_proposals WHERE subject_id = $1 ORDER BY dropped_at DESC, id
         LIMIT $2 OFFSET $3`,
        [subjectId, page.limit, page.offset],
      );
      return rows.map((r) => ({
        id: r.id,
        sessionId: r.session_id,
        slot: r.slot,
        text: r.text,
        ...unwrap(r.proposal),
        code: r.code,
        reason: r.reason,
        proposedBy: r.proposed_by,
        droppedAt: r.dropped_at,
      }));
    });
  }

  count(subjectId: string): Promise<number> {
    return guard('counting the dropped log', async () => {
      const { rows } = await this.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM dropped_proposals WHERE subject_id = $1',
        [subjectId],
      );
      return rows[0]?.n ?? 0;
    });
  }

  /**
   * Drops per calendar day (in `zone`) and code over the `days` days up to and including the day
   * `now` falls on there, oldest day first, then code. The day is formatted here, in SQL, so it
   * never passes through a local-midnight JS Date.
   */
  byDay(subjectId: string, now: Date, zone: string, days: number): Promise<DroppedDay[]> {
    return guard('summarising the dropped log', async () => {
      const { rows } = await this.db.query<DroppedDay>(
        // the window's ends are the zone's midnights, as instants: first day in, the day after out
        `SELECT to_char(dropped_at AT TIME ZONE $3, 'YYYY-MM-DD') AS day, code,
                count(*)::int AS count
         FROM dropped_proposals
         WHERE subject_id = $1
           AND dropped_at >= ((($2::timestamptz AT TIME ZONE $3)::date - ($4::int - 1))::timestamp
                              AT TIME ZONE $3)
           AND dropped_at < ((($2::timestamptz AT TIME ZONE $3)::date + 1)::timestamp
                             AT TIME ZONE $3)
         GROUP BY 1, 2 ORDER BY 1, 2`,
        [subjectId, now, zone, days],
      );
      return rows;
    });
  }
}
