// What memledger's tools tell a model, in every face that offers them (MCP, and the framework
// adapters' tools): what a proposal became, one recalled memory per line, what became of a
// forget request. Rendered here once, so every face says the same.
import type { Attestation } from './attestation.js';
import type { DropCode } from './gate-rules.js';
import type { FactStatus } from './fact.js';
import type { ForgetRequestStatus } from './forget.js';
import { renderReceiptLine, type Receipt } from './receipt.js';
import { shownInline } from './shown-text.js';

/** What the gate answered a batch of proposals (the gate's `ProposeResult`). */
export interface ProposeAnswer {
  proposed: ReadonlyArray<{
    id: string;
    slot: string;
    text: string;
    attested: boolean;
    attestation: Attestation | null;
    status: FactStatus;
  }>;
  dropped: ReadonlyArray<{ slot: string; text: string; code: DropCode | string; reason: string }>;
}

/** What the gate did with a batch of proposals, for the model that proposed them. */
export function renderProposeAnswer(r: ProposeAnswer): string {
  const lines = [
    `Proposed ${r.proposed.length}, dropped ${r.dropped.length}.`,
    ...r.proposed.map(
      (p) =>
        `PROPOSED ${p.id} ${shownInline(p.slot)}: ${shownInline(p.text)}${p.status === 'active' ? ' [live by the owner’s signed delegation of this slot]' : ''}${p.attested ? '' : ` [UNATTESTED${p.attestation === null ? '' : ` (${p.attestation.verdict}): ${shownInline(p.attestation.reason)}`}]`}`,
    ),
    ...r.dropped.map(
      (d) =>
        `DROPPED ${d.code} ${shownInline(d.slot)}: ${shownInline(d.text)}\n  why: ${shownInline(d.reason)}`,
    ),
  ];
  if (r.proposed.some((p) => p.status !== 'active')) {
    lines.push(
      'Nothing proposed is live: each proposal waits in the pile until the owner approves or rejects it, and no tool can do that.',
    );
  }
  if (r.dropped.length > 0) {
    lines.push(
      'Dropped items are logged and never stored as memory. Evidence is the user’s own words from a numbered user turn (or a tool receipt for origin did); your own replies are never evidence, and a correction needs a turn where the user corrected you.',
    );
  }
  return lines.join('\n');
}

/** A recalled memory as a tool shows it (recall's `RecallItem`). */
export interface RecallAnswerItem {
  kind: 'turn' | 'fact';
  text: string;
  passport: {
    origin: string;
    primary: boolean;
    status: string;
    date: string;
    sessionId: string | null;
    turn: number | null;
    role?: string;
    slot?: string;
    receipt?: Receipt | null;
  };
}

/**
 * One recall item on one line (its receipt, written by memledger, on the next): the text, which
 * memledger did not write, has its line breaks and controls flattened and its receipt markers
 * defanged, so it can neither start a numbered item nor read as a receipt.
 */
export function renderRecallLine(item: RecallAnswerItem, rank: number): string {
  const p = item.passport;
  const where =
    item.kind === 'turn'
      ? `turn ${shownInline(p.sessionId ?? '?')}#${p.turn ?? '?'} ${shownInline(p.role ?? '')}`
      : `fact ${shownInline(p.slot ?? '')} (${p.origin}, ${p.status}${p.primary ? '' : ', not primary evidence'})`;
  const flat = shownInline(item.text).replace(/\s+/g, ' ');
  const body = flat.length > 400 ? `${flat.slice(0, 399)}…` : flat;
  const receipt = p.receipt ? `\n   ${renderReceiptLine(p.receipt)}` : '';
  return `${rank}. [${p.date.slice(0, 10)}] ${where}: ${body}${receipt}`;
}

/** The kinds of memory recall searches. */
type RecallAnswerKind = RecallAnswerItem['kind'];

/**
 * What a recall searched, for the words of an empty answer: the kinds it was limited to, the
 * session it was limited to, and how many items of the kinds it did NOT search match the same
 * query (`elsewhere`, when the caller looked).
 */
export interface RecallScope {
  kinds?: readonly RecallAnswerKind[] | undefined;
  session?: string | undefined;
  elsewhere?: number | undefined;
}

const KIND_WORDS: Record<RecallAnswerKind, { some: string; none: string }> = {
  turn: { some: 'recorded turns', none: 'recorded turn' },
  fact: { some: 'live facts', none: 'live fact' },
};

/** The kinds a recall did not search (none when it searched both). */
function unsearched(kinds: readonly RecallAnswerKind[] | undefined): RecallAnswerKind[] {
  const searched = new Set(kinds ?? ['turn', 'fact']);
  return (['turn', 'fact'] as const).filter((k) => !searched.has(k));
}

/**
 * What recall found, one memory per line; when it found nothing, what that means for what it
 * searched. "I have no record of that" is called the correct answer only when every kind was
 * searched (or the kinds left out were looked at and hold nothing) over every session; a search
 * of facts alone whose turns may hold the answer says so, and names the search to run.
 */
export function renderRecallAnswer(
  items: readonly RecallAnswerItem[],
  scope: RecallScope = {},
): string {
  if (items.length > 0) return items.map((it, i) => renderRecallLine(it, i + 1)).join('\n');
  const left = unsearched(scope.kinds);
  const where = scope.session === undefined ? '' : ` in session ${shownInline(scope.session)}`;
  const searched = (['turn', 'fact'] as const).filter((k) => !left.includes(k));
  const none = searched.map((k) => KIND_WORDS[k].none).join(' or ');
  if (left.length > 0 && scope.elsewhere !== 0) {
    const other = left.map((k) => KIND_WORDS[k].some).join(' and ');
    const may =
      scope.elsewhere === undefined
        ? `${other} were not searched and may hold it`
        : `${scope.elsewhere} ${scope.elsewhere === 1 ? left.map((k) => KIND_WORDS[k].none).join(' and ') : other} ${scope.elsewhere === 1 ? 'matches' : 'match'} it`;
    return `No ${none} matches this query${where}. Only ${searched.map((k) => KIND_WORDS[k].some).join(' and ')} were searched; ${may}: search them (kinds ${JSON.stringify(left)}) before you answer. Do not say there is no record yet.`;
  }
  const all = ['recorded turn', 'live fact'].join(' and no ');
  if (scope.session !== undefined) {
    return `No ${left.length > 0 ? all : none} matches this query${where}. Only this session was searched: search every session (no sessionId) before you say there is no record.`;
  }
  return `No record matches this query (no ${all}). "I have no record of that" is the correct answer.`;
}

/**
 * Recall for a model: the items, and the answer's text. When a search limited to some kinds
 * finds nothing, the kinds it left out are searched too (three items at most, same session) so
 * the answer can say whether they may hold it, rather than that no record exists.
 */
export async function recallForModel<I extends RecallAnswerItem>(
  search: (
    query: string,
    options: { k?: number; kinds?: RecallAnswerKind[]; session?: string },
  ) => Promise<I[]>,
  query: string,
  options: { k?: number; kinds?: readonly RecallAnswerKind[]; session?: string } = {},
): Promise<{ items: I[]; text: string }> {
  const { kinds, session } = options;
  const items = await search(query, {
    ...(options.k === undefined ? {} : { k: options.k }),
    ...(kinds === undefined ? {} : { kinds: [...kinds] }),
    ...(session === undefined ? {} : { session }),
  });
  let elsewhere: number | undefined;
  const left = unsearched(kinds);
  if (items.length === 0 && left.length > 0) {
    elsewhere = (
      await search(query, { k: 3, kinds: left, ...(session === undefined ? {} : { session }) })
    ).length;
  }
  return { items, text: renderRecallAnswer(items, { kinds, session, elsewhere }) };
}

/** What became of a forget request, and what to tell the user. */
export function renderForgetAnswer(r: {
  id: string;
  status: ForgetRequestStatus;
  waits?: string | undefined;
}): string {
  return r.status === 'honoured'
    ? `Forget request ${r.id} was honoured at once under the owner's policy: it is forgotten. Tell the user it is forgotten, and never repeat what it held.`
    : `Forget request ${r.id} is recorded; nothing is forgotten yet${r.waits === undefined ? '' : ` (${shownInline(r.waits)})`}. Tell the user it is requested, and forgotten once the owner honours it.`;
}
