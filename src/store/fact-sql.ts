import type { FactId, RetractionId } from '../domain/ids.js';
import { analyze } from '../domain/text/analyze.js';
import type { Attestation, AttestationVerdict } from '../domain/attestation.js';
import type { Citation, Fact, FactOrigin, FactStatus } from '../domain/fact.js';
import type { SqlExecutor } from './sql-client.js';
import { guard } from './store-error.js';

export interface FactDbRow {
  subject_id: string;
  id: FactId;
  slot: string;
  key: string | null;
  text: string;
  origin: FactOrigin;
  status: FactStatus;
  attested: boolean;
  evidence_turn_id: string | null;
  evidence_session_id: string | null;
  evidence_seq: number | null;
  evidence_quote: string | null;
  evidence_tool: string | null;
  evidence_citations: unknown;
  attestation: string | null;
  attestation_reason: string | null;
  supersedes_id: FactId | null;
  superseded_by_id: FactId | null;
  valid_from: Date | null;
  valid_to: Date | null;
  recorded_at: Date;
  superseded_at: Date | null;
  status_at: Date;
  proposed_by: string;
  retraction_id: RetractionId | null;
  restored_from_id: FactId | null;
}

/** The `facts` columns `toFact` reads, in one list for every query that returns facts. */
export const FACT_COLUMNS = `subject_id, id, slot, key, text, origin, status, attested,
  evidence_turn_id, evidence_session_id, evidence_seq, evidence_quote, evidence_tool,
  evidence_citations, attestation, attestation_reason, supersedes_id, superseded_by_id, valid_from, valid_to, recorded_at, superseded_at, status_at,
  proposed_by, retraction_id, restored_from_id`;

/**
 * A timestamp as read. PostgreSQL's `infinity` (a number in node-postgres, an invalid Date in
 * PGlite) is clamped to the last instant a Date holds, so nothing downstream throws on it; a
 * clamped value no longer hashes to what was signed, so such a fact is withheld, not shown.
 */
function dateOf(v: Date | number | null): Date | null {
  if (v === null) return null;
  if (v instanceof Date && Number.isFinite(v.getTime())) return v;
  return new Date(typeof v === 'number' && v < 0 ? -8.64e15 : 8.64e15);
}

const BROKEN_CITATION: Citation = { turn: '', session: '', seq: -1, at: 'not a citation' };

/**
 * A summarized fact's citations as stored. An entry of any other shape (a hand-edited row) is
 * read as a marker that hashes to nothing the owner signed, so the fact is withheld, never
 * thrown on.
 */
export function citationsOf(raw: unknown): Citation[] | null {
  if (raw === null || raw === undefined) return null;
  const value: unknown = typeof raw === 'string' ? safeParse(raw) : raw;
  if (!Array.isArray(value)) return [BROKEN_CITATION];
  return value.map((c: unknown) => {
    if (typeof c !== 'object' || c === null) return BROKEN_CITATION;
    const { turn, session, seq, at } = c as Record<string, unknown>;
    return typeof turn === 'string' &&
      typeof session === 'string' &&
      typeof at === 'string' &&
      typeof seq === 'number' &&
      Number.isSafeInteger(seq)
      ? { turn, session, seq, at }
      : BROKEN_CITATION;
  });
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return null;
  }
}

/**
 * A stored verdict as read. A value the gate never gives (a hand-edited row past its CHECK) is
 * kept as it is, so it hashes to nothing the owner signed and the fact is withheld.
 */
function attestationOf(r: FactDbRow): Attestation | null {
  if (r.attestation === null) return null;
  return { verdict: r.attestation as AttestationVerdict, reason: r.attestation_reason ?? '' };
}

/** A fact from its row (selected with `FACT_COLUMNS`). */
export function toFact(r: FactDbRow): Fact {
  return {
    id: r.id,
    subjectId: r.subject_id,
    slot: r.slot,
    key: r.key,
    text: r.text,
    origin: r.origin,
    status: r.status,
    attested: r.attested,
    attestation: attestationOf(r),
    evidence: {
      turnId: r.evidence_turn_id,
      sessionId: r.evidence_session_id,
      seq: r.evidence_seq,
      quote: r.evidence_quote,
      tool: r.evidence_tool,
      citations: citationsOf(r.evidence_citations),
    },
    supersedesId: r.supersedes_id,
    supersededById: r.superseded_by_id,
    validFrom: dateOf(r.valid_from),
    validTo: dateOf(r.valid_to),
    recordedAt: dateOf(r.recorded_at) as Date,
    supersededAt: dateOf(r.superseded_at),
    statusAt: dateOf(r.status_at) as Date,
    proposedBy: r.proposed_by,
    retractionId: r.retraction_id,
    restoredFromId: r.restored_from_id,
  };
}

/** A fact as the gate writes it: proposed (or receipt-checked), with its evidence. */
export interface NewFactRow {
  id: string;
  subjectId: string;
  slot: string;
  key: string | null;
  text: string;
  origin: FactOrigin;
  status: 'proposed' | 'active';
  attested: boolean;
  /** The gate's verdict on the quote; null (or absent) for actions and summaries. */
  attestation?: Attestation | null;
  evidence: Fact['evidence'];
  proposedBy: string;
  validFrom: Date | null;
  validTo: Date | null;
  at: Date;
}

/** Facts: proposed, promoted, superseded, retracted and restored, never overwritten or deleted. */
export class FactSql {
  constructor(private readonly db: SqlExecutor) {}

  insert(f: NewFactRow): Promise<Fact> {
    return guard('storing a fact', async () => {
      const { rows } = await this.db.query<FactDbRow>(
        `INSERT INTO facts (subject_id, id, slot, key, text, origin, status, attested,
           evidence_turn_id, evidence_session_id, evidence_seq, evidence_quote, evidence_tool,
           proposed_by, valid_from, valid_to, recorded_at, status_at, terms, evidence_citations,
           attestation, attestation_reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17,
                 $18::text[], $19::jsonb, $20, $21)
         RETURNING ${FACT_COLUMNS}`,
        [
          f.subjectId,
          f.id,
          f.slot,
          f.key,
          f.text,
          f.origin,
          f.status,
          f.attested,
          f.evidence.turnId,
          f.evidence.sessionId,
          f.evidence.seq,
          f.evidence.quote,
          f.evidence.tool,
          f.proposedBy,
          f.validFrom,
          f.validTo,
          f.at,
          analyze(f.text),
          f.evidence.citations === undefined || f.evidence.citations === null
            ? null
            : JSON.stringify(f.evidence.citations),
          f.attestation?.verdict ?? null,
          f.attestation?.reason ?? null,
        ],
      );
      return toFact(rows[0] as FactDbRow);
    });
  }

  get(subjectId: string, id: string): Promise<Fact | null> {
    return guard('reading a fact', async () => {
      const { rows } = await this.db.query<FactDbRow>(
        `SELECT ${FACT_COLUMNS} FROM facts WHERE subject_id = $1 AND id = $2`,
        [subjectId, id],
      );
      return rows[0] === undefined ? null : toFact(rows[0]);
    });
  }

  byStatus(
    subjectId: string,
    statuses: readonly FactStatus[],
    page?: { limit: number; offset: number },
  ): Promise<Fact[]> {
    return guard('listing facts', async () => {
      const { rows } = await this.db.query<FactDbRow>(
        `SELECT ${FACT_COLUMNS} FROM facts WHERE subject_id = $1 AND status = ANY($2::text[])
         ORDER BY recorded_at, id LIMIT $3 OFFSET $4`,
        [subjectId, statuses, page?.limit ?? null, page?.offset ?? 0],
      );
      return rows.map(toFact);
    });
  }

  /** How many of the subject's facts have one of `statuses`. */
  countByStatus(subjectId: string, statuses: readonly FactStatus[]): Promise<number> {
    return guard('counting facts', async () => {
      const { rows } = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM facts WHERE subject_id = $1 AND status = ANY($2::text[])`,
        [subjectId, statuses],
      );
      return rows[0]?.n ?? 0;
    });
  }

  /** Texts pending in a slot, for the DUPLICATE rule (the live ones come from the trust view). */
  pendingTexts(subjectId: string, slot: string): Promise<string[]> {
    return guard('reading slot texts', async () => {
      const { rows } = await this.db.query<{ text: string }>(
        `SELECT text FROM facts WHERE subject_id = $1 AND slot = $2 AND status = 'proposed'`,
        [subjectId, slot],
      );
      return rows.map((r) => r.text);
    });
  }

  /**
   * Every fact out of the pile, with what the store can show for a promotion without a
   * decision: a receipt check (did, in an action slot, the tool on the cited turn's receipt; the
   * caller checks the slot's signed delegation) or the original fact a probe-settled overturned retraction restored.
   */
  decisionAudit(subjectId: string): Promise<
    Array<{
      id: string;
      slot: string;
      tool: string | null;
      recordedAt: Date;
      status: FactStatus;
      receiptOk: boolean;
      restoredOriginal: string | null;
    }>
  > {
    return guard('auditing fact statuses', async () => {
      const { rows } = await this.db.query<{
        id: string;
        slot: string;
        evidence_tool: string | null;
        recorded_at: Date;
        status: FactStatus;
        receipt_ok: boolean | null;
        restored_original: string | null;
      }>(
        `SELECT f.id, f.slot, f.evidence_tool, f.recorded_at, f.status,
                (f.promoted_by = 'receipt' AND f.origin = 'did' AND s.rule = 'action'
                 AND t.receipt_kind = 'tools' AND f.evidence_tool = ANY (t.receipt_tools)) AS receipt_ok,
                r.fact_id AS restored_original
         FROM facts f
         JOIN slots s ON s.subject_id = f.subject_id AND s.name = f.slot
         LEFT JOIN turns t ON t.subject_id = f.subject_id AND t.id = f.evidence_turn_id
         LEFT JOIN retractions r ON r.subject_id = f.subject_id AND r.restored_fact_id = f.id
                                 AND r.verdict = 'overturned'
                                 AND r.settled_probe_record_id IS NOT NULL
                                 AND f.promoted_by = 'restoration' AND f.restored_from_id = r.fact_id
         WHERE f.subject_id = $1 AND f.status <> 'proposed'
         ORDER BY f.recorded_at, f.id`,
        [subjectId],
      );
      return rows.map((r) => ({
        id: r.id,
        slot: r.slot,
        tool: r.evidence_tool,
        recordedAt: r.recorded_at,
        status: r.status,
        receiptOk: r.receipt_ok === true,
        restoredOriginal: r.restored_original,
      }));
    });
  }

  /** Whether a live value for slot+key went live after `since` (a newer owner decision). */
  liveDecidedSince(subjectId: string, slot: string, key: string, since: Date): Promise<boolean> {
    return guard('reading live facts', async () => {
      const { rows } = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM facts
         WHERE subject_id = $1 AND slot = $2 AND key = $3 AND status = 'active' AND status_at > $4`,
        [subjectId, slot, key, since],
      );
      return (rows[0]?.n ?? 0) > 0;
    });
  }

  countInSlot(subjectId: string, slot: string): Promise<number> {
    return guard('counting facts', async () => {
      const { rows } = await this.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM facts WHERE subject_id = $1 AND slot = $2',
        [subjectId, slot],
      );
      return rows[0]?.n ?? 0;
    });
  }

  setStatus(subjectId: string, id: string, status: FactStatus, at: Date): Promise<void> {
    return guard('changing a fact status', async () => {
      await this.db.query(
        'UPDATE facts SET status = $3, status_at = $4 WHERE subject_id = $1 AND id = $2',
        [subjectId, id, status, at],
      );
    });
  }

  /** How a fact stored as live went live (`promoted_by`), or null for none (or no such fact). */
  promotedBy(subjectId: string, id: string): Promise<string | null> {
    return guard('reading a fact', async () => {
      const { rows } = await this.db.query<{ promoted_by: string | null }>(
        `SELECT promoted_by FROM facts WHERE subject_id = $1 AND id = $2`,
        [subjectId, id],
      );
      return rows[0]?.promoted_by ?? null;
    });
  }

  /** Takes a live fact down: it stays, labelled retracted, linked to its ledger row. */
  retract(subjectId: string, id: string, retractionId: string, at: Date): Promise<boolean> {
    return guard('retracting a fact', async () => {
      const { rows } = await this.db.query<{ id: string }>(
        `UPDATE facts SET status = 'retracted', status_at = $4, retraction_id = $3
         WHERE subject_id = $1 AND id = $2 AND status = 'active' RETURNING id`,
        [subjectId, id, retractionId, at],
      );
      return rows.length === 1;
    });
  }

  /** A copy of a retracted fact, restored by an overturned retraction, lineage kept. */
  insertRestored(original: Fact, id: string, at: Date): Promise<void> {
    return guard('restoring a fact', async () => {
      await this.db.query(
        `INSERT INTO facts (subject_id, id, slot, key, text, origin, status, attested, evidence_turn_id,
           evidence_session_id, evidence_seq, evidence_quote, evidence_tool, evidence_citations,
           proposed_by, valid_from, valid_to, recorded_at, status_at, restored_from_id, terms,
           attestation, attestation_reason)
         SELECT subject_id, $3, slot, key, text, origin, 'proposed', attested, evidence_turn_id,
           evidence_session_id, evidence_seq, evidence_quote, evidence_tool, evidence_citations,
           'restoration', valid_from, valid_to, $4, $4, id, terms, attestation, attestation_reason
         FROM facts WHERE subject_id = $1 AND id = $2`,
        [original.subjectId, original.id, id, at],
      );
    });
  }

  /**
   * Makes a proposed (or receipt-checked) fact live. A new value for a live slot+key supersedes
   * the older fact, as does the owner's correction of one (`corrects`); both rows stay, linked
   * both ways.
   */
  promote(
    subjectId: string,
    id: string,
    at: Date,
    by: 'owner' | 'receipt' | 'restoration',
    corrects?: string,
  ): Promise<{ superseded: string | null }> {
    return guard('making a fact live', async () => {
      const { rows } = await this.db.query<{ id: string }>(
        `SELECT old.id FROM facts f
         JOIN facts old ON old.subject_id = f.subject_id AND old.status = 'active'
                       AND old.id <> f.id AND (old.id = $3
                         OR (f.key IS NOT NULL AND old.slot = f.slot AND old.key = f.key))
         WHERE f.subject_id = $1 AND f.id = $2`,
        [subjectId, id, corrects ?? null],
      );
      const old = rows[0]?.id ?? null;
      // The old value steps down first: one live fact per slot+key is a unique index.
      for (const r of rows) {
        await this.db.query(
          `UPDATE facts SET status = 'superseded', status_at = $4, superseded_at = $4, superseded_by_id = $3
           WHERE subject_id = $1 AND id = $2`,
          [subjectId, r.id, id, at],
        );
      }
      await this.db.query(
        `UPDATE facts SET status = 'active', status_at = $3, supersedes_id = $4, promoted_by = $5
         WHERE subject_id = $1 AND id = $2`,
        [subjectId, id, at, old, by],
      );
      return { superseded: old };
    });
  }
}
