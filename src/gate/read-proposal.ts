import { FACT_ORIGINS, type Proposal } from '../domain/fact.js';

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Reads one raw item into a Proposal, or explains why it is not one. */
export function readProposal(
  raw: unknown,
): { proposal: Proposal } | { reason: string; slot: string; text: string } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { reason: 'a proposal must be an object', slot: '', text: '' };
  }
  const o = raw as Record<string, unknown>;
  const slot = str(o.slot) ?? '';
  const text = str(o.text) ?? '';
  const origin = str(o.origin);
  if ([slot, text, str(o.key) ?? ''].some((v) => v.includes('\u0000'))) {
    return { reason: 'a proposal must not contain NUL characters', slot, text };
  }
  if (slot === '' || text.trim() === '')
    return { reason: 'a proposal needs a slot and a text', slot, text };
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
    if (!(year >= 1 && year <= 9999)) {
      return { reason: `${field} is not a date between years 1 and 9999: "${v}"`, slot, text };
    }
    proposal[field] = v;
  }
  const ev = o.evidence;
  if (ev !== undefined && ev !== null) {
    if (typeof ev !== 'object' || Array.isArray(ev))
      return { reason: 'evidence must be an object', slot, text };
    const e = ev as Record<string, unknown>;
    proposal.evidence = {};
    if (e.turn !== undefined) {
      if (typeof e.turn !== 'number' || !Number.isInteger(e.turn) || e.turn < 1) {
        return { reason: 'evidence.turn must be a turn number (seq) from 1', slot, text };
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
