import type { Fact } from './fact.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "16 Jul 2026" in UTC: dates in passports never depend on the host's zone. */
export function passportDate(d: Date): string {
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()] ?? '?'} ${d.getUTCFullYear()}`;
}

export function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function label(f: Fact): string {
  return f.key === null ? f.slot : `${f.slot}.${f.key}`;
}

/**
 * One line per fact, passport first (seed 000):
 *   (saw, 16 Jul 2026) shift_pattern: Kvällsskift runs 15:00-23:00
 *   [SUPERSEDED] (saw, recorded 2026-10-02, superseded 2026-10-21) shift_pattern: …
 * A fact whose quote is real but does not say what the text claims is marked [UNATTESTED].
 */
export function renderFactLine(f: Fact): string {
  const flag = f.attested ? '' : ' [UNATTESTED]';
  if (f.status === 'active') {
    const restored = f.restoredFromId === null ? '' : ', restored';
    return `(${f.origin}, ${passportDate(f.validFrom ?? f.recordedAt)}${restored})${flag} ${label(f)}: ${f.text}`;
  }
  const parts = [`${f.origin}`, `recorded ${isoDay(f.recordedAt)}`];
  if (f.supersededAt !== null) parts.push(`superseded ${isoDay(f.supersededAt)}`);
  else if (f.status === 'rejected' || f.status === 'retracted' || f.status === 'expired') {
    parts.push(`${f.status} ${isoDay(f.statusAt)}`);
  }
  if (f.retractionId !== null) parts.push(`ledger ${f.retractionId}`);
  return `[${f.status.toUpperCase()}] (${parts.join(', ')})${flag} ${label(f)}: ${f.text}`;
}
