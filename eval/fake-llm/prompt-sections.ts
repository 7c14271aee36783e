/**
 * The sections a reflection or summary request puts in its user message, read back the way the
 * fake model reads them. A section opens at a line that is exactly `<name>` and closes at a line
 * that is exactly `</name>`; each line between is one JSON object. Turn texts are JSON strings,
 * so a hostile `</turns>` inside a turn stays on its own line's string and closes nothing.
 */

/** The section names a request may carry, in the order the engine writes them. */
export const PROMPT_SECTIONS = [
  'turns',
  'slots',
  'live_facts',
  'aspect',
  'previous_summary',
] as const;
/** One of `PROMPT_SECTIONS`. */
export type PromptSectionName = (typeof PROMPT_SECTIONS)[number];

/** One numbered turn of the conversation, as the engine renders it into the prompt. */
export interface PromptTurn {
  turn: number;
  role: 'user' | 'assistant';
  /** When the turn was recorded (ISO 8601); null when the line carries no time. */
  at: string | null;
  text: string;
  /** Assistant turns: "no tools ran", "unknown", or "tools ran: a, b; sources: u1, u2". */
  receipt?: string;
}

/** A slot the reflection may propose into, and the gate rule its proposals are checked by. */
export interface PromptSlot {
  slot: string;
  rule: string;
}

/** A live fact shown to the reflection, with its passport (origin and date). */
export interface PromptFact {
  slot: string;
  origin: string;
  date: string;
  text: string;
}

/** What a summary request asks to be summarized. */
export interface PromptAspect {
  aspect: string;
  description: string;
}

/** One sentence of the previous summary and the turns it cited (numbers, or as rendered). */
export interface PreviousSentence {
  text: string;
  turns?: number[];
  /** memledger's rendering of the cited turns ("#12 #15"). */
  cited?: string;
}

/** Everything `parseSections` found; a missing section reads as empty (or null). */
export interface PromptSections {
  turns: PromptTurn[];
  slots: PromptSlot[];
  liveFacts: PromptFact[];
  aspect: PromptAspect | null;
  previous: PreviousSentence[];
}

type Json = Record<string, unknown>;

/**
 * Parse the sections out of a prompt. Missing sections are empty, lines that are not a JSON
 * object of the section's shape are skipped, a section repeated later adds to the first, and an
 * unclosed section runs to the end of the text.
 */
export function parseSections(text: string): PromptSections {
  const lines = sectionLines(text);
  const objects = (name: PromptSectionName): Json[] =>
    (lines.get(name) ?? []).flatMap((line) => {
      const o = parseObject(line);
      return o === null ? [] : [o];
    });
  return {
    turns: objects('turns').flatMap((o) => asList(toTurn(o))),
    slots: objects('slots').flatMap((o) => asList(toSlot(o))),
    liveFacts: objects('live_facts').flatMap((o) => asList(toFact(o))),
    aspect: objects('aspect').flatMap((o) => asList(toAspect(o)))[0] ?? null,
    previous: objects('previous_summary').flatMap((o) => asList(toPrevious(o))),
  };
}

function sectionLines(text: string): Map<PromptSectionName, string[]> {
  const found = new Map<PromptSectionName, string[]>();
  let open: { name: PromptSectionName; lines: string[] } | null = null;
  for (const raw of text.split(/\r?\n/u)) {
    const line = raw.trim();
    if (open === null) {
      const name = PROMPT_SECTIONS.find((n) => line === `<${n}>`);
      if (name === undefined) continue;
      const lines = found.get(name) ?? [];
      found.set(name, lines);
      open = { name, lines };
    } else if (line === `</${open.name}>`) {
      open = null;
    } else {
      open.lines.push(line);
    }
  }
  return found;
}

function parseObject(line: string): Json | null {
  if (!line.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(line);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

/** A plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const asList = <T>(value: T | null): T[] => (value === null ? [] : [value]);
const isTurnNumber = (n: unknown): n is number =>
  typeof n === 'number' && Number.isSafeInteger(n) && n > 0;

function toTurn(o: Json): PromptTurn | null {
  const { turn, role, at, text, receipt } = o;
  if (!isTurnNumber(turn) || (role !== 'user' && role !== 'assistant')) return null;
  if (typeof text !== 'string') return null;
  if (at !== undefined && at !== null && typeof at !== 'string') return null;
  const parsed: PromptTurn = { turn, role, at: at ?? null, text };
  if (typeof receipt === 'string') parsed.receipt = receipt;
  return parsed;
}

function toSlot(o: Json): PromptSlot | null {
  const { slot, rule } = o;
  return typeof slot === 'string' && typeof rule === 'string' ? { slot, rule } : null;
}

function toFact(o: Json): PromptFact | null {
  const { slot, origin, date, text } = o;
  if (typeof slot !== 'string' || typeof text !== 'string') return null;
  if (typeof origin !== 'string' || typeof date !== 'string') return null;
  return { slot, origin, date, text };
}

function toAspect(o: Json): PromptAspect | null {
  const { aspect, description } = o;
  return typeof aspect === 'string' && typeof description === 'string'
    ? { aspect, description }
    : null;
}

function toPrevious(o: Json): PreviousSentence | null {
  const { text, turns, cited } = o;
  if (typeof text !== 'string') return null;
  if (Array.isArray(turns)) return turns.every(isTurnNumber) ? { text, turns: [...turns] } : null;
  return typeof cited === 'string' ? { text, cited } : null;
}
