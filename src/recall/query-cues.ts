import { analyze } from '../domain/text/analyze.js';

/** Cues a question gives beyond its words: is it about time, which months and years it names. */
export interface QueryCues {
  temporal: boolean;
  months: ReadonlySet<number>;
  years: ReadonlySet<number>;
}

/** English month names, January first. */
export const MONTH_NAMES: readonly string[] = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

const TEMPORAL =
  /\b(when|how long ago|how long has|how long did|what (?:year|month|day|date|time|week)|which (?:year|month|day|week))\b/i;

export function queryCues(query: string): QueryCues {
  const lower = query.toLowerCase();
  const months = new Set<number>();
  for (const [i, name] of MONTH_NAMES.entries()) {
    // "may" is a verb too: count it only next to a day or a year
    const pattern =
      name === 'may'
        ? /\bmay\s+(?:\d{1,2}(?:st|nd|rd|th)?\b|,?\s*\d{4})|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?may\b/
        : new RegExp(`\\b${name}\\b`);
    if (pattern.test(lower)) months.add(i + 1);
  }
  const years = new Set<number>();
  for (const m of lower.matchAll(/\b(19[5-9]\d|20\d\d)\b/g)) years.add(Number(m[1]));
  return { temporal: TEMPORAL.test(query), months, years };
}

/**
 * Stemmed words that place an event in time ("yesterday", "last week", a weekday, a month, a
 * year from 1950 to 2099).
 */
export const TIME_TERMS: ReadonlySet<string> = new Set([
  ...analyze(
    `yesterday today tonight tomorrow ago last week weekend month year recently earlier lately
     since monday tuesday wednesday thursday friday saturday sunday morning evening night
     ${MONTH_NAMES.join(' ')} spring summer autumn fall winter birthday anniversary`,
  ),
  ...Array.from({ length: 150 }, (_, i) => String(1950 + i)),
]);

/** Does a turn's date (UTC) fall in a month or year the question names? */
export function dateMatches(cues: QueryCues, at: Date): boolean {
  if (cues.months.size === 0 && cues.years.size === 0) return false;
  const monthOk = cues.months.size === 0 || cues.months.has(at.getUTCMonth() + 1);
  const yearOk = cues.years.size === 0 || cues.years.has(at.getUTCFullYear());
  return monthOk && yearOk;
}
