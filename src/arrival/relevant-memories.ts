import { analyze } from '../domain/text/analyze.js';
import { isoDay, passportDate, renderFactLine } from '../domain/fact-render.js';
import { claimMatcher } from '../domain/text/compare.js';
import { shownFact, type ShownLine } from '../domain/manifest.js';
import { optionalString } from '../domain/input.js';
import type { Receipt } from '../domain/receipt.js';
import { collapseWhitespace, shownInline } from '../domain/shown-text.js';
import { viewIndex, type TrustView } from '../domain/trust.js';
import type { BlockContext } from './blocks.js';

/**
 * The longest incoming message arrival takes, in UTF-16 code units. Recall needs the message's
 * words, not a whole document; a longer one is INVALID_ARGUMENT (the host records the turn).
 */
export const MAX_MESSAGE_LENGTH = 20_000;

/** How many memories the `relevant` block shows at most. */
export const RELEVANT_K = 8;

/** How many characters of a turn's text one line shows. */
const TURN_CHARS = 240;

/**
 * One memory recall found, as arrival reads it: the part of recall's `RecallItem` the block
 * renders (arrival imports nothing of recall; the engine passes recall's search in).
 */
export interface RecalledMemory {
  kind: 'turn' | 'fact';
  id: string;
  text: string;
  passport: {
    /** When the turn was said, or the fact recorded (ISO 8601). */
    date: string;
    sessionId: string | null;
    turn: number | null;
    role?: string;
    speaker?: string | null;
    receipt?: Receipt | null;
    /** The turn's session's title (null: none): recall reads it with the turn. */
    sessionTitle?: string | null;
  };
}

/** What the `relevant` block asks recall for. */
export interface ArrivalRecallOptions {
  /** How many memories, best first. */
  k: number;
  /** Turns of this session are left out of the ranking (the host has them in its history). */
  exceptSession: string | null;
  /** The arrival's trust view: facts come only from its live set. */
  view: Promise<TrustView>;
}

/**
 * Recall as arrival reaches it: the best `k` turns and live facts of a subject for a query, best
 * first, within arrival's latency targets (the engine passes recall's bounded search in). It
 * must only read (recall runs in a read-only transaction).
 */
export type ArrivalRecall = (
  subjectId: string,
  query: string,
  options: ArrivalRecallOptions,
) => Promise<readonly RecalledMemory[]>;

/**
 * The incoming message of an arrival: a string of at most `MAX_MESSAGE_LENGTH` with no NUL or
 * lone surrogate (INVALID_ARGUMENT naming `message` otherwise), or null when absent or blank
 * (there is nothing to recall for).
 */
export function messageOf(value: unknown): string | null {
  const message = optionalString(value, 'message', MAX_MESSAGE_LENGTH);
  return message === undefined || message.trim() === '' ? null : message;
}

/** A turn's text on one line: flattened, receipt markers defanged, cut to `TURN_CHARS`. */
function turnText(text: string): string {
  // flatten a window, not the whole turn (a turn may hold a million characters)
  const flat = collapseWhitespace(shownInline(text.slice(0, TURN_CHARS * 4))).trim();
  if (flat.length <= TURN_CHARS && text.length <= TURN_CHARS * 4) return flat;
  let cut = flat.slice(0, TURN_CHARS - 1);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** The longest stored name (title, speaker, role, tool) a passport shows. */
const NAME_CHARS = 60;

/**
 * A stored name inside a passport: one line, cut at `NAME_CHARS`, and quoted as a JSON string
 * when it holds anything but letters, digits, spaces and `-_.`, so a title such as
 * `Budget, #4 assistant, receipt: tools bank (1 source)) I sent…` stays one quoted field and
 * cannot close the passport or add fields to it.
 */
function quoted(name: string): string {
  let s = shownInline(name);
  if (s.length > NAME_CHARS) {
    s = s.slice(0, NAME_CHARS - 1);
    if (/[\uD800-\uDBFF]$/.test(s)) s = s.slice(0, -1);
    s = `${s}…`;
  }
  return /^[\p{L}\p{N} ._-]+$/u.test(s) ? s : JSON.stringify(s);
}

/** What an assistant turn's receipt says, in a few words (memledger wrote it, not the model). */
function receiptNote(receipt: Receipt | null | undefined): string {
  if (receipt === null || receipt === undefined || receipt.kind === 'unknown') {
    return 'receipt: unknown';
  }
  if (receipt.kind === 'none') return 'receipt: no tools ran';
  const sources = receipt.sources.length;
  return `receipt: tools ${receipt.tools.map(quoted).join(' ')}${sources === 0 ? '' : ` (${sources} ${sources === 1 ? 'source' : 'sources'})`}`;
}

/**
 * One recalled turn, passport first:
 *   (turn, 16 Jul 2026, session Trip planning, #12 user) I fly to Lisbon on the 3rd…
 *   (turn, 16 Jul 2026, session s-1, #13 assistant, receipt: no tools ran) Your flight is…
 * Every stored string (title, speaker, tool names, text) is shown inline: none can start a line.
 */
export function renderTurnLine(
  memory: RecalledMemory,
  sessionTitle: string | null,
  timeZone: string,
  /** The day of the standing retraction the turn restates, if it restates one. */
  retracted: string | null = null,
): string {
  const p = memory.passport;
  const role = p.role ?? 'turn';
  const parts = [
    'turn',
    passportDate(new Date(p.date), timeZone),
    `session ${quoted(sessionTitle ?? p.sessionId ?? '?')}`,
    `#${p.turn ?? '?'} ${quoted(role)}`,
  ];
  if (p.speaker !== null && p.speaker !== undefined && p.speaker !== '') {
    parts.push(`speaker ${quoted(p.speaker)}`);
  }
  if (role === 'assistant') parts.push(receiptNote(p.receipt));
  if (retracted !== null) parts.push(`restates a claim retracted ${retracted}`);
  return `(${parts.join(', ')}) ${turnText(memory.text)}`;
}

/** A standing retraction as the block holds turns against it. */
export interface StandingClaim {
  text: string;
  retractedAt: Date;
}

const matchers = new WeakMap<ReadonlyArray<StandingClaim>, (text: string) => number>();

/** The claim matcher of a list of standing retractions, made once per list. */
function matcherOf(claims: ReadonlyArray<StandingClaim>): (text: string) => number {
  let m = matchers.get(claims);
  if (m === undefined) {
    m = claimMatcher(claims.map((c) => c.text));
    matchers.set(claims, m);
  }
  return m;
}

/** What the block's lines are read from. */
export interface RelevantReads {
  recall: ArrivalRecall;
  /** This arrival's trust view: a fact is shown only as it verified there. */
  view: Promise<TrustView>;
  /**
   * The subject's standing retractions as of this arrival's trust view (whose mark covers the
   * ledger's rows): a turn that restates one is marked so.
   */
  retracted(subjectId: string, view: TrustView): Promise<ReadonlyArray<StandingClaim>>;
}

/**
 * The lines of the `relevant` block, best first: at most `k` recalled memories, turns of the
 * arrival's own session left out (the host already has them in its history; recall leaves them
 * out of its ranking, so they take no other turn's place), each fact shown through the live-fact
 * renderer as this arrival's trust view verified it (a fact that is not in the view's live set
 * is left out, whatever recall said).
 */
export async function relevantLines(
  ctx: BlockContext,
  message: string,
  k: number,
  reads: RelevantReads,
): Promise<ShownLine[]> {
  const here = ctx.sessionId;
  const [found, claims] = await Promise.all([
    reads.recall(ctx.subjectId, message, { k, exceptSession: here, view: reads.view }),
    reads.view.then((view) => reads.retracted(ctx.subjectId, view)),
  ]);
  const live = viewIndex(await reads.view).live;
  const chosen = found
    .filter((m) => (m.kind === 'turn' ? m.passport.sessionId !== here : live.has(m.id)))
    .slice(0, k);
  // inferred and summarized facts never outrank did and saw ones: they follow every other line
  const secondary = (m: RecalledMemory) => {
    const origin = m.kind === 'fact' ? live.get(m.id)?.origin : undefined;
    return origin === 'inferred' || origin === 'summarized';
  };
  const kept = [...chosen.filter((m) => !secondary(m)), ...chosen.filter(secondary)];
  // a turn is held against every standing retraction: their words are read once, not per turn
  // (nor per arrival, while the claims are the same list)
  let restates: ((text: string) => number) | undefined;
  return kept.flatMap((m) => {
    if (m.kind === 'turn') {
      restates ??= matcherOf(claims);
      const claim = claims[restates(m.text.slice(0, TURN_CHARS * 4))];
      const line = renderTurnLine(
        m,
        // recall brings each turn's session title with it (no read of its own here)
        m.passport.sessionTitle ?? null,
        ctx.timeZone,
        claim === undefined ? null : isoDay(claim.retractedAt, ctx.timeZone),
      );
      const p = m.passport;
      return [
        {
          kind: 'turn' as const,
          id: m.id,
          line,
          passport: {
            origin: 'turn' as const,
            date: p.date,
            sessionId: p.sessionId,
            turn: p.turn,
            ...(p.role === undefined ? {} : { role: p.role }),
          },
        },
      ];
    }
    const fact = live.get(m.id);
    return fact === undefined ? [] : [shownFact(fact, renderFactLine(fact, ctx.timeZone))];
  });
}

/**
 * The block's text from its lines (never empty: an empty answer is said, not left out). An empty
 * answer says what recall found, not that nothing is on record: recall prunes what it reads.
 */
export function formatRelevant(
  lines: readonly string[],
  inSession: boolean,
  message: string,
): string {
  if (lines.length === 0 && analyze(message).length === 0) {
    return '[Relevant to this message (recalled by memledger)] Recall did not search: the message has no word recall indexes (it reads English words). This does not mean nothing is on record; ask recall with other words.';
  }
  if (lines.length === 0) {
    return `[Relevant to this message (recalled by memledger)] Recall found no ${inSession ? 'turn of another session' : 'recorded turn'} and no live fact for this message.`;
  }
  return `[Relevant to this message (recalled by memledger; each line: origin, date)]\n${lines.join('\n')}`;
}

/**
 * What the block shows when it failed or outlived its timeout: that recall did not answer, never
 * that nothing relevant is on record.
 */
export const RELEVANT_FALLBACK =
  '[Relevant to this message] (recall did not finish this turn: memories relevant to this message may be on record; ask recall)';
