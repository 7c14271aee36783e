import { FACT_ORIGINS, type Proposal } from '../domain/fact.js';
import { INPUT_LIMITS, stringProblem, structureProblem } from '../domain/input.js';

type Read = { proposal: Proposal } | { reason: string; slot: string; text: string };

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/**
 * The most a proposal's string fields may hold (the text's own bound, 2,000 characters, is a
 * gate rule; here it only has to be storable).
 */
const FIELD_LIMITS: ReadonlyArray<[string, (o: Record<string, unknown>) => unknown, number]> = [
  ['slot', (o) => o.slot, INPUT_LIMITS.slotLength],
  ['text', (o) => o.text, Number.MAX_SAFE_INTEGER],
  ['key', (o) => o.key, INPUT_LIMITS.keyLength],
  ['origin', (o) => o.origin, INPUT_LIMITS.fieldLength],
  ['validFrom', (o) => o.validFrom, INPUT_LIMITS.fieldLength],
  ['validTo', (o) => o.validTo, INPUT_LIMITS.fieldLength],
  ['evidence.quote', (o) => evidenceOf(o)?.quote, INPUT_LIMITS.quoteLength],
  ['evidence.tool', (o) => evidenceOf(o)?.tool, INPUT_LIMITS.toolLength],
];

function evidenceOf(o: Record<string, unknown>): Record<string, unknown> | undefined {
  const ev = o.evidence;
  return typeof ev === 'object' && ev !== null && !Array.isArray(ev)
    ? (ev as Record<string, unknown>)
    : undefined;
}

/**
 * Reads one raw item into a Proposal, or explains why it is not one (an INVALID_PROPOSAL drop
 * for that item alone). Everything the store could not hold is refused here, before any SQL:
 * a shape that is not plain bounded data (`structureProblem`), a string with NUL or a lone
 * surrogate or over its bound (`stringProblem`), an evidence.turn beyond PostgreSQL's integer.
 */
export function readProposal(raw: unknown): Read {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { reason: 'a proposal must be an object', slot: '', text: '' };
  }
  const shape = structureProblem(raw);
  if (shape !== null) {
    return { reason: `a proposal must be plain JSON data: it ${shape}`, slot: '', text: '' };
  }
  const o = raw as Record<string, unknown>;
  const slot = str(o.slot) ?? '';
  const text = str(o.text) ?? '';
  for (const [field, get, max] of FIELD_LIMITS) {
    const value = get(o);
    if (typeof value !== 'string') continue;
    const problem = stringProblem(value, max);
    if (problem !== null) return { reason: `${field} ${problem}`, slot, text };
  }
  if (slot === '' || text.trim() === '')
    return { reason: 'a proposal needs a slot and a text', slot, text };
  const origin = str(o.origin);
  if (origin === undefined || !(FACT_ORIGINS as readonly string[]).includes(origin)) {
    return { reason: `origin must be one of ${FACT_ORIGINS.join(', ')}`, slot, text };
  }
  const proposal: Proposal = { slot, text, origin: origin as Proposal['origin'] };
  const key = str(o.key);
  if (key !== undefined && key !== '') proposal.key = key;
  for (const field of ['validFrom', 'validTo'] as const) {
    const v = str(o[field]);
    if (v === undefined) continue;
    const t = Date.parse(v);
    const year = Number.isNaN(t) ? NaN : new Date(t).getUTCFullYear();
    // Years outside 1..9999 parse in JS but not in PostgreSQL: refuse them here, as a drop.
    if (!(year >= INPUT_LIMITS.minYear && year <= INPUT_LIMITS.maxYear)) {
      const shown = v.length > 64 ? `${v.slice(0, 64)}…` : v;
      return { reason: `${field} is not a date between years 1 and 9999: "${shown}"`, slot, text };
    }
    proposal[field] = v;
  }
  const ev = o.evidence;
  if (ev !== undefined && ev !== null) {
    const e = evidenceOf(o);
    if (e === undefined) return { reason: 'evidence must be an object', slot, text };
    proposal.evidence = {};
    if (e.turn !== undefined) {
      if (
        typeof e.turn !== 'number' ||
        !Number.isInteger(e.turn) ||
        e.turn < 1 ||
        e.turn > INPUT_LIMITS.maxInt
      ) {
        return {
          reason: `evidence.turn must be a turn number (seq) from 1 to ${INPUT_LIMITS.maxInt}`,
          slot,
          text,
        };
      }
      proposal.evidence.turn = e.turn;
    }
    const quote = str(e.quote);
    if (quote !== undefined) proposal.evidence.quote = quote;
    const tool = str(e.tool);
    if (tool !== undefined) proposal.evidence.tool = tool;
  }
  return { proposal };
}
