import type { Attestation } from './attestation.js';
import type { Citation, Fact } from './fact.js';
import { shownInline } from './shown-text.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The calendar day of an instant in a zone (UTC unless a subject's zone is given). */
const FORMATS = new Map<string, Intl.DateTimeFormat>();

function dayIn(d: Date, timeZone: string): { year: number; month: number; day: number } {
  // Building a formatter costs far more than using one: keep one per zone.
  let format = FORMATS.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
    });
    FORMATS.set(timeZone, format);
  }
  const parts = format.formatToParts(d);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? NaN);
  return { year: get('year'), month: get('month'), day: get('day') };
}

/** "16 Jul 2026": the day the instant falls on in `timeZone` (default UTC, never the host's). */
export function passportDate(d: Date, timeZone = 'UTC'): string {
  const { year, month, day } = dayIn(d, timeZone);
  return `${day} ${MONTHS[month - 1] ?? '?'} ${year}`;
}

/** "2026-07-16": the day the instant falls on in `timeZone` (default UTC, never the host's). */
export function isoDay(d: Date, timeZone = 'UTC'): string {
  const { year, month, day } = dayIn(d, timeZone);
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** A fact's citations; a caller's partial fact may have no evidence object at all. */
function citationsOf(f: Fact): readonly Citation[] | null | undefined {
  return (f.evidence as Fact['evidence'] | undefined)?.citations;
}

/** The slot (and key) and the text, each kept on the fact's one line whatever was stored. */
function label(f: Fact): string {
  // a summary's key is its scope (rolling, or the session's id); its citations say which
  const citations = citationsOf(f);
  const summary = citations !== null && citations !== undefined;
  return shownInline(f.key === null || summary ? f.slot : `${f.slot}.${f.key}`);
}

/**
 * The turns a summarized fact cites: "#12 #15", or, when they are of more than one session,
 * each session's turns with the day of the first: "#3 #4 of 1 Dec 2026, #12 of 2 Dec 2026".
 * Empty when there are none.
 */
export function renderCitations(
  citations: readonly Citation[] | null | undefined,
  timeZone = 'UTC',
): string {
  if (citations === null || citations === undefined || citations.length === 0) return '';
  const groups = new Map<string, Citation[]>();
  for (const c of citations) groups.set(c.session, [...(groups.get(c.session) ?? []), c]);
  const seqs = (cs: readonly Citation[]) => cs.map((c) => `#${c.seq}`).join(' ');
  if (groups.size === 1) return seqs(citations);
  return [...groups.values()]
    .map((cs) => {
      const at = new Date((cs[0] as Citation).at);
      return `${seqs(cs)} of ${Number.isFinite(at.getTime()) ? passportDate(at, timeZone) : '?'}`;
    })
    .join(', ');
}

const ORIGIN_RANK: Readonly<Record<Fact['origin'], number>> = {
  did: 0,
  saw: 1,
  inferred: 2,
  summarized: 3,
};

/**
 * Facts in the order a context shows them: `did`, then `saw`, then `inferred`, then
 * `summarized` (what was inferred or summarized never outranks what was done or said), each
 * origin in the order given.
 */
export function byPassport<T extends Pick<Fact, 'origin'>>(facts: readonly T[]): T[] {
  return facts
    .map((f, i) => ({ f, i }))
    .sort((a, b) => ORIGIN_RANK[a.f.origin] - ORIGIN_RANK[b.f.origin] || a.i - b.i)
    .map((x) => x.f);
}

/**
 * What a reviewer reads about a fact's attestation, or null when it is attested: the gate's
 * verdict and its reason ("UNATTESTED (presupposed): the quoted sentence is a question …"), or,
 * for a fact stored before typed attestation, that its words did not overlap enough.
 */
export function unattestedNote(f: Pick<Fact, 'attested' | 'attestation'>): string | null {
  if (f.attested) return null;
  const a = f.attestation;
  return a === undefined || a === null || a.verdict === 'asserted'
    ? 'UNATTESTED: the quoted words are real but do not say this'
    : `UNATTESTED (${a.verdict}): ${shownInline(a.reason)}`;
}

/**
 * The verdict a stored fact claims its quote got, when it claims one, and whether the gate's
 * reading now (`now`) disagrees. A fact stored without a verdict but flagged attested claims
 * `asserted`; one stored without either claims nothing (it was flagged unattested).
 */
export function storedVerdictDiffers(
  f: Pick<Fact, 'attested' | 'attestation'>,
  now: Attestation | null | undefined,
): { stored: string } | null {
  const stored = f.attestation?.verdict ?? (f.attested ? 'asserted' : null);
  return now === null || now === undefined || stored === null || now.verdict === stored
    ? null
    : { stored };
}

/** ` [UNATTESTED]`, with the verdict when the gate typed it; '' for an attested fact. */
export function attestationFlag(f: Pick<Fact, 'attested' | 'attestation'>): string {
  if (f.attested) return '';
  const verdict = f.attestation?.verdict;
  return verdict === undefined || verdict === 'asserted'
    ? ' [UNATTESTED]'
    : ` [UNATTESTED: ${verdict}]`;
}

/**
 * One line per fact, passport first (seed 000):
 *   (saw, 16 Jul 2026) shift_pattern: Kvällsskift runs 15:00-23:00
 *   [SUPERSEDED] (saw, recorded 2026-10-02, superseded 2026-10-21) shift_pattern: …
 *   (summarized, 2 Dec 2026, from #12 #15) life_lately: The user started a new job…
 * A fact whose quote is real but does not say what the text claims is marked [UNATTESTED], with
 * the gate's verdict when it has one ([UNATTESTED: presupposed]: the quote asked, it did not state).
 * A line break or control character in the slot, key or text is shown as a space, so one fact
 * is one line and no stored text can start a line with a passport of its own; a receipt marker
 * in them is defanged.
 */
export function renderFactLine(f: Fact, timeZone = 'UTC'): string {
  const flag = attestationFlag(f);
  if (f.status === 'active') {
    const restored = f.restoredFromId === null ? '' : ', restored';
    const cited = renderCitations(citationsOf(f), timeZone);
    const from = cited === '' ? '' : `, from ${cited}`;
    return `(${f.origin}, ${passportDate(f.validFrom ?? f.recordedAt, timeZone)}${from}${restored})${flag} ${label(f)}: ${shownInline(f.text)}`;
  }
  const parts = [`${f.origin}`, `recorded ${isoDay(f.recordedAt, timeZone)}`];
  if (f.supersededAt !== null) parts.push(`superseded ${isoDay(f.supersededAt, timeZone)}`);
  else if (f.status === 'rejected' || f.status === 'retracted' || f.status === 'expired') {
    parts.push(`${f.status} ${isoDay(f.statusAt, timeZone)}`);
  }
  if (f.retractionId !== null) parts.push(`ledger ${f.retractionId}`);
  return `[${f.status.toUpperCase()}] (${parts.join(', ')})${flag} ${label(f)}: ${shownInline(f.text)}`;
}
