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

/** What recall found, one memory per line; what an empty answer means when it is empty. */
export function renderRecallAnswer(items: readonly RecallAnswerItem[]): string {
  return items.length === 0
    ? 'No record matches this query. "I have no record of that" is the correct answer.'
    : items.map((it, i) => renderRecallLine(it, i + 1)).join('\n');
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
