/**
 * A scripted summary writer with the two faults a summary check must catch: a sentence its cited
 * turn does not say, and a sentence citing a turn that does not exist. Beside them it restates
 * real first-person statements, each citing the turn that says it. Deterministic.
 */
import type { PreviousSentence, PromptAspect, PromptTurn } from './prompt-sections.js';
import { userStatements } from './scripted-reflection.js';

/** One summary sentence and the turns it claims to rest on. */
export interface SummarySentence {
  text: string;
  turns: number[];
}

/** What the scripted model answers to `write_summary`. */
export interface ScriptedSummary {
  sentences: SummarySentence[];
}

/** How many faithful sentences the summary restates at most. */
export const MAX_RESTATED = 3;

/** The sentence no turn supports; it cites the user turn nearest to it in words anyway. */
export const UNSUPPORTED_SENTENCE = 'The user has been sleeping much better lately.';

const wordsOf = (text: string): string[] => text.toLowerCase().match(/[a-z]+/g) ?? [];
const UNSUPPORTED_WORDS = new Set(['sleep', 'sleeping', 'slept', 'better', 'lately']);

/** The sentence that cites a turn past the end of the record (the last turn number + 7). */
export const PHANTOM_TURN_SENTENCE = 'The user said they are planning a trip with their sister.';

/**
 * Summarize the turns: up to `MAX_RESTATED` restatements (each user turn's first first-person
 * statement, citing that turn), then `UNSUPPORTED_SENTENCE` citing the user turn sharing most of its words (the first when
 * none does), then,
 * when there are at least two turns, `PHANTOM_TURN_SENTENCE` citing a turn that does not exist.
 * The aspect and the previous summary are read by a real model; the script ignores them.
 */
export function scriptedSummary(input: {
  turns: readonly PromptTurn[];
  aspect: PromptAspect | null;
  previous: readonly PreviousSentence[];
}): ScriptedSummary {
  const { turns } = input;
  const users = turns.filter((t) => t.role === 'user');
  const sentences: SummarySentence[] = [];
  for (const t of users) {
    if (sentences.length >= MAX_RESTATED) break;
    const said = userStatements(t.text).find((s) => s.kind !== 'instruction');
    if (said !== undefined) sentences.push({ text: said.text, turns: [t.turn] });
  }
  // the unsupported sentence cites the user turn nearest to it in words, as a model would
  const nearest = users.reduce<{ turn: PromptTurn; shared: number } | null>((best, t) => {
    const shared = wordsOf(t.text).filter((w) => UNSUPPORTED_WORDS.has(w)).length;
    return best === null || shared > best.shared ? { turn: t, shared } : best;
  }, null);
  if (nearest !== null) {
    sentences.push({ text: UNSUPPORTED_SENTENCE, turns: [nearest.turn.turn] });
  }
  if (turns.length >= 2) {
    const maxTurn = Math.max(...turns.map((t) => t.turn));
    sentences.push({ text: PHANTOM_TURN_SENTENCE, turns: [maxTurn + 7] });
  }
  return { sentences };
}
