/**
 * Utility generations (a title for the chat, an insight pass, memledger's own reflection and
 * summaries) are answered by a model but are not conversation: recording them would put words in
 * the user's mouth, and citing them would make a model's output its own evidence.
 */
export const UTILITY_KINDS = ['title', 'insight', 'utility', 'reflection', 'summary'] as const;
/** One of `UTILITY_KINDS`. */
export type UtilityKind = (typeof UTILITY_KINDS)[number];

const PREFIXES: ReadonlyArray<readonly [string, UtilityKind]> = [
  ['__title__', 'title'],
  ['__insight__', 'insight'],
];

/**
 * A prefix names the kind (a fallback for older clients; the recorder reads it in user turns
 * only); the explicit flag marks any other.
 */
export function detectUtility(content: string, flagged: boolean): UtilityKind | null {
  const head = content.trimStart();
  for (const [prefix, kind] of PREFIXES) {
    if (head.startsWith(prefix)) return kind;
  }
  return flagged ? 'utility' : null;
}
