import { renderReceiptLine } from '../domain/receipt.js';
import { shownText } from '../domain/shown-text.js';
import { forgottenLine, type Turn, type TurnRole } from '../domain/turn.js';

export interface RenderHistoryOptions {
  /** Upper bound on the rendered text's length, in characters. Oldest turns go first. */
  budgetChars?: number;
  /** Longer turn bodies are snipped; their receipts never are. */
  maxTurnChars?: number;
}

function header(turn: Turn): string {
  const at = turn.recordedAt.toISOString().slice(0, 16).replace('T', ' ');
  const flag = turn.corrective ? ' (corrective)' : '';
  return `#${turn.seq} ${turn.role}${flag} [${at} UTC]: `;
}

const SNIP = ' […snipped]';

function snip(body: string, room: number): string {
  if (body.length <= room) return body;
  if (room <= SNIP.length) return SNIP.trimStart();
  let kept = body.slice(0, room - SNIP.length);
  if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
  return kept.trimEnd() + SNIP;
}

interface Piece {
  head: string;
  body: string;
  receipt: string | null;
}

function pieceLength(p: Piece): number {
  return p.head.length + p.body.length + (p.receipt === null ? 0 : p.receipt.length + 1);
}

function renderPiece(p: Piece): string {
  return p.receipt === null ? p.head + p.body : `${p.head}${p.body}\n${p.receipt}`;
}

/**
 * Renders a session's turns as labelled lines for a system prompt, each assistant turn followed
 * by its receipt. The receipt is split off before any snipping, so every kept turn keeps it.
 * Every line memledger writes starts at the margin (`#N role [time]: `, a receipt line,
 * `[N earlier turns omitted]`); a turn's own line breaks start lines indented by
 * `CONTINUATION_INDENT` (`shownText`'s `indented` layout), so no turn can start a line that
 * reads as memledger's, and each line's turn is the nearest header above it.
 */
export function renderHistory(turns: readonly Turn[], options: RenderHistoryOptions = {}): string {
  const pieces: Piece[] = turns.map((turn) => {
    // a forgotten turn keeps its place, so a reader knows a gap is there
    if (turn.forgotten !== undefined) {
      return {
        head: header(turn),
        body: forgottenLine({ ...turn, forgotten: turn.forgotten }),
        receipt: null,
      };
    }
    // any role's receipt markers are defanged: only the receipt line below is memledger's
    const body = shownText(turn.content, 'indented');
    return {
      head: header(turn),
      body: options.maxTurnChars === undefined ? body : snip(body, options.maxTurnChars),
      receipt: turn.receipt === null ? null : renderReceiptLine(turn.receipt),
    };
  });
  const budget = options.budgetChars;
  if (budget === undefined) return pieces.map(renderPiece).join('\n');

  const kept: Piece[] = [];
  let used = 0;
  for (let i = pieces.length - 1; i >= 0; i--) {
    const piece = pieces[i] as Piece;
    const omitted = i; // turns older than this one that would be left out
    const note = omitted > 0 ? `[${omitted} earlier turns omitted]`.length + 1 : 0;
    const sep = kept.length > 0 ? 1 : 0;
    const room = budget - used - sep - note;
    if (pieceLength(piece) <= room) {
      kept.unshift(piece);
      used += pieceLength(piece) + sep;
      continue;
    }
    // Snip the body, never the head or the receipt; keep the turn only if something of it fits.
    const fixed = pieceLength({ ...piece, body: '' });
    const finalNote = i > 0 ? `[${i} earlier turns omitted]`.length + 1 : 0;
    const bodyRoom = budget - used - sep - finalNote - fixed;
    if (bodyRoom > SNIP.length) {
      kept.unshift({ ...piece, body: snip(piece.body, bodyRoom) });
      const lines = kept.map(renderPiece);
      if (i > 0) lines.unshift(`[${i} earlier turns omitted]`);
      return lines.join('\n');
    }
    const lines = kept.map(renderPiece);
    const dropped = i + 1;
    lines.unshift(`[${dropped} earlier turns omitted]`);
    return lines.join('\n');
  }
  return kept.map(renderPiece).join('\n');
}

/** One chat-completion message rendered from a turn. */
export interface HistoryMessage {
  role: TurnRole;
  content: string;
}

/**
 * Chat-style messages; each receipt follows its turn as a system message, never inside it. A
 * turn's content keeps its line breaks (`shownText`'s `lines` layout: each message is its own
 * object), with its receipt markers defanged and what does not show as code points.
 */
export function historyMessages(turns: readonly Turn[]): HistoryMessage[] {
  const out: HistoryMessage[] = [];
  for (const turn of turns) {
    if (turn.forgotten !== undefined) {
      out.push({ role: turn.role, content: forgottenLine({ ...turn, forgotten: turn.forgotten }) });
      continue;
    }
    out.push({
      role: turn.role,
      content: shownText(turn.content, 'lines'),
    });
    if (turn.receipt !== null)
      out.push({ role: 'system', content: renderReceiptLine(turn.receipt) });
  }
  return out;
}
