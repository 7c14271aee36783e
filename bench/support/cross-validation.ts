/**
 * Leave-one-conversation-out cross-validation of a ranking parameter, pure: given each value's
 * score on every conversation, each conversation is scored with the value the OTHER
 * conversations would have chosen, so a value that only wins on the conversation it is measured
 * on gains nothing here.
 */

/** A value's score on each conversation (the same conversations for every value). */
export type ScoresByValue<V> = ReadonlyMap<V, ReadonlyMap<string, number>>;

/** Per held-out conversation: the value chosen on the others, and what it scored there. */
export interface HeldOut<V> {
  conversation: string;
  chosen: V;
  score: number;
}

const mean = (xs: readonly number[]): number =>
  xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length;

/**
 * The value with the best mean score over `conversations`; a tie goes to `preferred` (the
 * current default) when it is among the best, else to the value listed first.
 */
export function bestValue<V>(
  scores: ScoresByValue<V>,
  conversations: readonly string[],
  preferred: V,
): V {
  let best: V | undefined;
  let bestScore = -Infinity;
  for (const [value, byConv] of scores) {
    const s = mean(conversations.map((c) => byConv.get(c) ?? 0));
    const better = s > bestScore + 1e-12;
    const tie = Math.abs(s - bestScore) <= 1e-12 && value === preferred;
    if (better || tie) {
      best = value;
      bestScore = s;
    }
  }
  if (best === undefined) return preferred;
  return best;
}

/** Each conversation held out in turn: the value the rest choose, and its score there. */
export function leaveOneOut<V>(
  scores: ScoresByValue<V>,
  conversations: readonly string[],
  preferred: V,
): HeldOut<V>[] {
  return conversations.map((held) => {
    const rest = conversations.filter((c) => c !== held);
    const chosen = bestValue(scores, rest, preferred);
    return { conversation: held, chosen, score: scores.get(chosen)?.get(held) ?? 0 };
  });
}

/** The mean of the held-out scores: the cross-validated estimate. */
export function heldOutMean<V>(held: readonly HeldOut<V>[]): number {
  return mean(held.map((h) => h.score));
}
