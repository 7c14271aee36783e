/** The sentence without its final full stop, question or exclamation mark. */
export const unstop = (s: string): string => s.replace(/[.!?]$/u, '');
/** The text with its first character in lower case. */
export const lowerFirst = (s: string): string => `${s.charAt(0).toLowerCase()}${s.slice(1)}`;
/** The text up to the end of its first sentence. */
export const firstSentence = (s: string): string => s.split(/(?<=[.?!])\s/u)[0] ?? s;
