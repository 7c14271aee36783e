import type { FactOrigin, FactStatus } from '../domain/fact.js';
import type { RecalledFactRow } from '../domain/recall-index.js';

/**
 * A fact row as one JSON array, over a relation whose columns are the facts table's; with
 * `parseFactRows`, the one mapping of recalled facts (lexical and vector recall both use it).
 */
export const FACT_ROW_JSON = `json_build_array(id, slot, key, text, origin, status, attested,
  evidence_turn_id, evidence_session_id, evidence_seq, evidence_quote, evidence_tool,
  (extract(epoch FROM recorded_at) * 1000)::float8, (extract(epoch FROM status_at) * 1000)::float8,
  (extract(epoch FROM valid_from) * 1000)::float8, (extract(epoch FROM valid_to) * 1000)::float8,
  terms)`;

/** Parses a JSON list of `FACT_ROW_JSON` arrays (null: none). */
export function parseFactRows(doc: string | null): RecalledFactRow[] {
  return ((JSON.parse(doc ?? 'null') as unknown[] | null) ?? []).map(factRow);
}

/** One parsed `FACT_ROW_JSON` array as a fact row. */
export function factRow(json: unknown): RecalledFactRow {
  const r = json as [
    string,
    string,
    string | null,
    string,
    FactOrigin,
    FactStatus,
    boolean,
    string | null,
    string | null,
    number | null,
    string | null,
    string | null,
    number,
    number,
    number | null,
    number | null,
    string[] | null,
  ];
  // `infinity` arrives as a non-finite number or a string: clamped, so nothing throws on it
  const date = (ms: number | string | null): Date | null => {
    if (ms === null) return null;
    const n = Number(ms);
    return new Date(
      Number.isFinite(n) ? Math.max(-8.64e15, Math.min(8.64e15, n)) : n < 0 ? -8.64e15 : 8.64e15,
    );
  };
  return {
    id: r[0],
    slot: r[1],
    key: r[2],
    text: r[3],
    origin: r[4],
    status: r[5],
    attested: r[6],
    evidenceTurnId: r[7],
    evidenceSessionId: r[8],
    evidenceSeq: r[9],
    evidenceQuote: r[10],
    evidenceTool: r[11],
    recordedAt: date(r[12]) as Date,
    statusAt: date(r[13]) as Date,
    validFrom: date(r[14]),
    validTo: date(r[15]),
    terms: r[16] ?? [],
  };
}
