import type { Fact, FactOrigin } from '../domain/fact.js';
import type { RecalledFactRow, RecalledTurn } from '../domain/recall-index.js';
import { shownText } from '../domain/shown-text.js';
import type { RecallItem } from './recall-types.js';

/** An inferred or summarized fact's score is discounted by this much. */
export const SECONDARY_WEIGHT = 0.8;

/** Turns and did/saw facts are primary evidence; inferred and summarized facts are not. */
export const isPrimary = (origin: 'turn' | FactOrigin): boolean =>
  origin === 'turn' || origin === 'did' || origin === 'saw';

/**
 * A recalled turn as a recall item, with its passport. Its text is the turn's content as history's
 * messages show it (`shownText`, `lines`): a receipt marker in it is defanged, never a receipt,
 * and what does not show is shown as code points.
 */
export function turnItem(
  session: string,
  seq: number,
  row: RecalledTurn,
  score: number,
): RecallItem {
  return {
    kind: 'turn',
    id: row.id,
    text: shownText(row.content, 'lines'),
    score,
    passport: {
      origin: 'turn',
      primary: true,
      status: 'recorded',
      date: row.recordedAt.toISOString(),
      sessionId: session,
      turn: seq,
      role: row.role,
      speaker: row.speaker,
      receipt: row.receipt,
    },
  };
}

/** A recalled fact as a recall item, with its passport; its text shown as a turn's is. */
export function factItem(row: RecalledFactRow, score: number): RecallItem {
  return {
    kind: 'fact',
    id: row.id,
    text: shownText(row.text, 'lines'),
    score,
    passport: {
      origin: row.origin,
      primary: isPrimary(row.origin),
      status: row.status,
      date: row.recordedAt.toISOString(),
      sessionId: row.evidenceSessionId,
      turn: row.evidenceSeq,
      slot: row.slot,
      key: row.key,
      attested: row.attested,
      evidence: { turnId: row.evidenceTurnId, quote: row.evidenceQuote, tool: row.evidenceTool },
      validFrom: row.validFrom?.toISOString() ?? null,
      validTo: row.validTo?.toISOString() ?? null,
    },
  };
}

/** A verified fact in the shape recall ranks (its terms are not needed to show it). */
export function rowOfFact(f: Fact): RecalledFactRow {
  return {
    id: f.id,
    slot: f.slot,
    key: f.key,
    text: f.text,
    origin: f.origin,
    status: f.status,
    attested: f.attested,
    evidenceTurnId: f.evidence.turnId,
    evidenceSessionId: f.evidence.sessionId,
    evidenceSeq: f.evidence.seq,
    evidenceQuote: f.evidence.quote,
    evidenceTool: f.evidence.tool,
    recordedAt: f.recordedAt,
    statusAt: f.statusAt,
    validFrom: f.validFrom,
    validTo: f.validTo,
    terms: [],
  };
}
