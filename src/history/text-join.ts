/**
 * A model response is a list of content blocks; text blocks are interleaved with tool blocks
 * (tool_use, server_tool_use, web_search_tool_result, …), and successive tool rounds each add
 * their own. Two opposite mistakes are possible when joining them:
 * - a bare `+` after a tool block glues sentences: "…decided to." + "Good…" → "to.Good";
 * - a separator after every block shatters a cited sentence: "The temperature is " + "86°F" +
 *   ", with …" arrives as three text blocks and must stay one sentence.
 * The one bit that tells the cases apart is whether a non-text block intervened.
 */
export type ResponseBlock =
  { type: 'text'; text: string } | { type: string; [key: string]: unknown };

function isTextBlock(block: ResponseBlock): block is { type: 'text'; text: string } {
  return block.type === 'text' && typeof block.text === 'string';
}

/** The separator to put between two texts that a non-text block separated ('' or ' '). */
export function textJoinSeparator(left: string, right: string): string {
  if (left.length === 0 || right.length === 0) return '';
  if (/\s$/.test(left) || /^\s/.test(right)) return '';
  return ' ';
}

/**
 * Joins the text of one response, or of several tool rounds passed as one list of blocks with
 * the tool blocks between them (see `joinRounds`).
 */
export function joinTextBlocks(blocks: readonly ResponseBlock[]): string {
  let out = '';
  let nonTextBetween = false;
  for (const block of blocks) {
    if (!isTextBlock(block)) {
      if (out.length > 0) nonTextBetween = true;
      continue;
    }
    if (block.text.length === 0) continue;
    out += nonTextBetween ? textJoinSeparator(out, block.text) + block.text : block.text;
    nonTextBetween = false;
  }
  return out;
}

/** Successive tool rounds: a round boundary is a non-text block by definition. */
export function joinRounds(rounds: ReadonlyArray<readonly ResponseBlock[]>): string {
  return joinTextBlocks(
    rounds.flatMap((round, i) => (i === 0 ? [...round] : [{ type: 'round_boundary' }, ...round])),
  );
}
