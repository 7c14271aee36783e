/**
 * The words bench:serve's user and assistant turns are made of: the benchmarks' shared
 * vocabulary (bench/fixtures), combined by a seeded random, so a run's seeded store and its
 * traffic come back the same for the same seed. A user turn holds one quotable sentence (its
 * `fact`), which a proposal can quote and paraphrase as a claim.
 */
import { ASIDES, EVENTS, RELATIONS, REQUESTS, SKILLS, TIMES } from '../fixtures/gate-vocabulary.js';
import { CITIES, MONTHS, NAMES, PAYEES, PROJECTS, WEEKDAYS } from '../fixtures/vocabulary.js';
import { BenchError } from './bench-error.js';

/** A user turn's text, the sentence in it a proposal may quote, and the claim that quote backs. */
export interface UserTurnText {
  content: string;
  quote: string;
  claim: string;
}

/** One of `list`, drawn by `random`. */
export function pick<T>(random: () => number, list: readonly T[]): T {
  const v = list[Math.floor(random() * list.length)];
  if (v === undefined) throw new BenchError('pick from an empty list');
  return v;
}

/** [the user's sentence, the claim it backs], one of seven shapes. */
function factSentence(r: () => number): [string, string] {
  switch (Math.floor(r() * 7)) {
    case 0: {
      const [rel, name, city] = [pick(r, RELATIONS), pick(r, NAMES), pick(r, CITIES)];
      return [`My ${rel} ${name} lives in ${city}.`, `The user's ${rel} ${name} lives in ${city}`];
    }
    case 1: {
      const [event, day, time] = [pick(r, EVENTS), pick(r, WEEKDAYS), pick(r, TIMES)];
      return [
        `I have ${event} every ${day} at ${time}.`,
        `The user has ${event} every ${day} at ${time}`,
      ];
    }
    case 2: {
      const [project, month, day] = [pick(r, PROJECTS), pick(r, MONTHS), 1 + Math.floor(r() * 28)];
      return [
        `We moved the ${project} deadline to ${month} ${day}.`,
        `The ${project} deadline is ${month} ${day}`,
      ];
    }
    case 3: {
      const [payee, month] = [pick(r, PAYEES), pick(r, MONTHS)];
      return [
        `Remind me to pay ${payee} before the end of ${month}.`,
        `The user must pay ${payee} before the end of ${month}`,
      ];
    }
    case 4: {
      const [city, day, project] = [pick(r, CITIES), pick(r, WEEKDAYS), pick(r, PROJECTS)];
      return [
        `I fly to ${city} on ${day} for the ${project}.`,
        `The user flies to ${city} on ${day} for the ${project}`,
      ];
    }
    case 5: {
      const [skill, name] = [pick(r, SKILLS), pick(r, NAMES)];
      return [
        `I started learning ${skill} with ${name} last month.`,
        `The user is learning ${skill} with ${name}`,
      ];
    }
    default: {
      const [name, project] = [pick(r, NAMES), pick(r, PROJECTS)];
      return [
        `${name} now leads the ${project} on our side.`,
        `${name} leads the ${project} for the user`,
      ];
    }
  }
}

/** A user turn: the quotable sentence, sometimes with an aside before it or a request after. */
export function userTurn(r: () => number): UserTurnText {
  const [quote, claim] = factSentence(r);
  const parts = [quote];
  if (r() < 0.3) parts.unshift(pick(r, ASIDES));
  if (r() < 0.5) parts.push(pick(r, REQUESTS));
  return { content: parts.join(' '), quote: quote.replace(/[.!?]$/u, ''), claim };
}

const REPLIES = [
  'Noted. I will keep that in mind and bring it up when it matters.',
  'Got it. I have put it on the list for this week.',
  'Understood; I will plan around that.',
  'Thanks, I checked the calendar and nothing clashes with it.',
  'Done. I also looked up the options and the earliest slot is still free.',
];

/** An assistant reply and, about a third of the time, the tool it ran. */
export function assistantTurn(r: () => number): { content: string; tool: string | null } {
  const tool = r() < 0.35 ? pick(r, ['calendar_lookup', 'web_search']) : null;
  const city = pick(r, CITIES);
  const tail = tool === null ? '' : ` The forecast for ${city} looks clear.`;
  return { content: `${pick(r, REPLIES)}${tail}`, tool };
}

/** A recall query: two to four words of one of `texts` (words of at least four letters). */
export function recallQuery(r: () => number, texts: readonly string[]): string {
  const words = (pick(r, texts).match(/[A-Za-z][A-Za-z'-]{3,}/gu) ?? []).filter(
    (w) => !/^(every|with|before|after|from|that|this|have|will|last|month)$/iu.test(w),
  );
  if (words.length === 0) return pick(r, CITIES);
  const n = Math.min(words.length, 2 + Math.floor(r() * 3));
  const chosen = new Set<string>();
  while (chosen.size < n) chosen.add(pick(r, words));
  return [...chosen].join(' ');
}

/** A misquote: the quote with one of its words changed, so it is not in the turn. */
export function misquote(quote: string): string {
  const words = quote.split(' ');
  const i = Math.max(0, words.length - 1);
  words[i] = `${words[i] ?? ''}x`;
  return words.join(' ');
}
