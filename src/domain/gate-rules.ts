/**
 * The write gate's rules as one pure function: a proposal and what the caller looked up about it
 * go in, a verdict comes out. The first rule that fails drops the proposal with a code and a
 * sentence a reviewer can read. No model decides anything here.
 */
import { aboutAgent, attest, type Attestation } from './attestation.js';
import { type CitedTurn, FACT_ORIGINS, type Proposal, type SlotDeclaration } from './fact.js';
import {
  findFailureCues,
  hasCorrectionCue,
  mentionsReferent,
  referentTokens,
} from './gate-cues.js';
import { callRan } from './receipt.js';
import { normalizeForQuote, quoteFoundIn } from './text/fold.js';
import { RETRACTED_SIMILARITY_THRESHOLD, negates, similarity } from './text/compare.js';

/** The cue lists and referent checks the rules below use (gate-cues.ts). */
export {
  claimsFailure,
  DEFAULT_CORRECTION_CUES,
  DEFAULT_FAILURE_CUES,
  GENERIC_REFERENT_WORDS,
  mentionsReferent,
  referentTokens,
} from './gate-cues.js';

/** Why the gate dropped a proposal: each rule's code. */
export const DROP_CODES = [
  'UNKNOWN_SLOT',
  'NO_EVIDENCE',
  'ORIGIN_MISMATCH',
  'TURN_NOT_FOUND',
  'EVIDENCE_FORGOTTEN',
  'EVIDENCE_NOT_USER_TURN',
  'QUOTE_NOT_FOUND',
  'RECEIPT_NOT_FOUND',
  'NO_CORRECTION_EVENT',
  'ABSENT_REFERENT',
  'RETRACTED_CLAIM',
  'DUPLICATE',
  'INVALID_PROPOSAL',
  'HIDDEN_CHARACTERS',
  'SLOT_NOT_OFFERED',
  'NOT_ABOUT_USER',
] as const;
/** One of `DROP_CODES`. */
export type DropCode = (typeof DROP_CODES)[number];

/** Longest proposal text, in characters (code points). A memory line, not a document. */
export const MAX_PROPOSAL_TEXT_LENGTH = 2000;

/** What the caller looked up for one proposal. The rules read nothing else. */
export interface GateContext {
  /** The declared slot the proposal names, or null when the subject declares no such slot. */
  slot: SlotDeclaration | null;
  /** The turn `evidence.turn` points at; null = not in this subject's record. */
  citedTurn: CitedTurn | null;
  correctionCues: readonly string[];
  failureCues: readonly string[];
  /**
   * Contents of this subject's turns recorded before the cited turn (any role), for
   * ABSENT_REFERENT; the caller may pre-filter them with `mentionsReferent`.
   */
  earlierTurnTexts: readonly string[];
  retractedClaims: ReadonlyArray<{ text: string; retractedAt: Date }>;
  /**
   * Texts already active or proposed in the same slot, ALREADY passed through
   * `normalizeForQuote` (the caller normalizes each once, not once per proposal).
   */
  liveOrPendingTexts: readonly string[];
}

/**
 * A proposal passes (attested or not) or is dropped with a code and a reason. `attestation` is
 * what the quoted sentence does with the claim (attestation.ts); `attested` is its verdict being
 * `asserted`. An action has no quote: its checked receipt attests it, and `attestation` is null.
 */
export type GateVerdict =
  | { ok: true; attested: boolean; attestation: Attestation | null }
  | { ok: false; code: DropCode; reason: string };

type Drop = Extract<GateVerdict, { ok: false }>;
type Rule = (p: Proposal, ctx: GateContext) => Drop | null;

const drop = (code: DropCode, reason: string): Drop => ({ ok: false, code, reason });

function isBlank(value: unknown): boolean {
  return typeof value !== 'string' || value.trim() === '';
}

const invalidProposal: Rule = (p) => {
  if (isBlank(p.text)) return drop('INVALID_PROPOSAL', 'the proposal has no text');
  if ([...p.text].length > MAX_PROPOSAL_TEXT_LENGTH) {
    return drop(
      'INVALID_PROPOSAL',
      `the text is longer than ${MAX_PROPOSAL_TEXT_LENGTH} characters`,
    );
  }
  if (!(FACT_ORIGINS as readonly unknown[]).includes(p.origin)) {
    return drop(
      'INVALID_PROPOSAL',
      `unknown origin "${String(p.origin)}": use one of ${FACT_ORIGINS.join(', ')}`,
    );
  }
  return null;
};

/**
 * Characters that change what a reader sees without showing: format characters (bidi overrides
 * and isolates, zero-width spaces, Unicode tags a model reads but a page does not draw) and
 * private-use ones. A zero-width joiner inside an emoji sequence is the one exception.
 */
const HIDDEN = /[\p{Cf}\p{Co}]/u;
const HIDDEN_ALL = /[\p{Cf}\p{Co}]/gu;
const EMOJI = /\p{Extended_Pictographic}/u;

/** The hidden characters of `s`, as code points (an emoji's joiner excepted). */
export function hiddenCharacters(s: string): number[] {
  if (!HIDDEN.test(s)) return [];
  const found: number[] = [];
  for (const m of s.matchAll(HIDDEN_ALL)) {
    const at = m.index;
    if (m[0] === '\u200D') {
      const before = String.fromCodePoint(s.codePointAt(at - 1) ?? 0);
      const after = String.fromCodePoint(s.codePointAt(at + 1) ?? 0);
      // a low surrogate before: the emoji's whole code point is what to test
      const prev = at >= 2 ? String.fromCodePoint(s.codePointAt(at - 2) ?? 0) : before;
      if ((EMOJI.test(before) || EMOJI.test(prev)) && EMOJI.test(after)) continue;
    }
    found.push(m[0].codePointAt(0) ?? 0);
  }
  return found;
}

const hiddenText: Rule = (p) => {
  const hidden = [
    ...hiddenCharacters(p.text),
    ...(typeof p.key === 'string' ? hiddenCharacters(p.key) : []),
  ];
  if (hidden.length === 0) return null;
  const shown = [...new Set(hidden)]
    .slice(0, 5)
    .map((c) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`);
  return drop(
    'HIDDEN_CHARACTERS',
    `the text holds ${hidden.length} character${hidden.length === 1 ? '' : 's'} a reader does not see (${shown.join(', ')}): what the owner approves must read as what a model is shown`,
  );
};

const unknownSlot: Rule = (p, ctx) =>
  ctx.slot === null
    ? drop(
        'UNKNOWN_SLOT',
        `slot "${p.slot}" is not declared; a slot that exists every night gets filled every night`,
      )
    : null;

const summaryAspect: Rule = (p, ctx) =>
  ctx.slot?.rule === 'summary'
    ? drop(
        'SLOT_NOT_OFFERED',
        `slot "${p.slot}" is a summary aspect: summaries.summarize writes it, each sentence checked against the turns it cites; it takes no proposals`,
      )
    : null;

const noEvidence: Rule = (p) => {
  if (p.evidence === undefined || p.evidence === null || typeof p.evidence !== 'object') {
    return drop('NO_EVIDENCE', 'the proposal cites no evidence');
  }
  const turn: unknown = p.evidence.turn;
  if (typeof turn !== 'number' || !Number.isInteger(turn)) {
    return drop('NO_EVIDENCE', 'the evidence names no turn');
  }
  return null;
};

const originMismatch: Rule = (p, ctx) => {
  const action = ctx.slot?.rule === 'action';
  if (action && p.origin !== 'did') {
    return drop(
      'ORIGIN_MISMATCH',
      `slot "${p.slot}" records the agent's actions; its origin must be "did", not "${p.origin}"`,
    );
  }
  if (!action && p.origin === 'did') {
    return drop(
      'ORIGIN_MISMATCH',
      `origin "did" is only for action slots, and "${p.slot}" is not one`,
    );
  }
  return null;
};

const turnNotFound: Rule = (p, ctx) =>
  ctx.citedTurn === null
    ? drop(
        'TURN_NOT_FOUND',
        `evidence turn ${String(p.evidence?.turn)} is not in this subject's record`,
      )
    : null;

function describeRole(turn: CitedTurn): string {
  return turn.role === 'assistant'
    ? `evidence turn ${turn.seq} is an assistant turn; the agent's own replies are never evidence`
    : `evidence turn ${turn.seq} is a ${turn.role} turn; only the user's own words are evidence`;
}

const quoteRules: Rule = (p, ctx) => {
  const turn = ctx.citedTurn;
  if (turn === null || ctx.slot?.rule === 'action') return null;
  if (turn.role !== 'user') return drop('EVIDENCE_NOT_USER_TURN', describeRole(turn));
  const quote: unknown = p.evidence?.quote;
  if (typeof quote !== 'string' || isBlank(quote)) {
    return drop('QUOTE_NOT_FOUND', `the evidence quotes nothing from turn ${turn.seq}`);
  }
  return quoteFoundIn(quote, turn.content)
    ? null
    : drop('QUOTE_NOT_FOUND', `the quote is not in turn ${turn.seq}: "${quote}"`);
};

const receiptRule: Rule = (p, ctx) => {
  const turn = ctx.citedTurn;
  if (turn === null || ctx.slot?.rule !== 'action') return null;
  const tool: unknown = p.evidence?.tool;
  if (typeof tool !== 'string' || isBlank(tool)) {
    return drop('RECEIPT_NOT_FOUND', 'an action must name the tool whose receipt shows it ran');
  }
  if (turn.role !== 'assistant') {
    return drop(
      'RECEIPT_NOT_FOUND',
      `turn ${turn.seq} is a ${turn.role} turn; receipts are on assistant turns`,
    );
  }
  if (!callRan(tool.trim())) {
    return drop(
      'RECEIPT_NOT_FOUND',
      `"${tool}" names a call that did not run (it failed, got no result or was not verified): an action needs a tool that ran`,
    );
  }
  return turn.receiptTools.includes(tool.trim())
    ? null
    : drop('RECEIPT_NOT_FOUND', `turn ${turn.seq}'s receipt shows no run of tool "${tool}"`);
};

const correctionEvent: Rule = (p, ctx) => {
  if (ctx.slot?.rule !== 'correction' || ctx.citedTurn === null) return null;
  if (ctx.citedTurn.corrective) return null;
  return hasCorrectionCue(p.evidence?.quote ?? '', ctx.correctionCues)
    ? null
    : drop(
        'NO_CORRECTION_EVENT',
        `turn ${ctx.citedTurn.seq} corrects nothing: no correction cue in the quote, and not recorded as corrective`,
      );
};

const absentReferent: Rule = (p, ctx) => {
  const cues = findFailureCues(p.text, ctx.failureCues, p.evidence?.quote);
  const cue = cues[0];
  if (cue === undefined) return null;
  const referent = referentTokens(p.text, ctx.failureCues);
  if (referent.length === 0) {
    return drop('ABSENT_REFERENT', `claims "${cue}" but names nothing the record could contain`);
  }
  return ctx.earlierTurnTexts.some((t) => mentionsReferent(t, referent))
    ? null
    : drop(
        'ABSENT_REFERENT',
        `claims "${cue}", but no earlier turn mentions "${referent.join(' ')}": nothing to recall`,
      );
};

const notAboutUser: Rule = (p, ctx) => {
  if (ctx.slot?.rule !== 'user_fact') return null;
  const why = aboutAgent(p.text, ctx.citedTurn?.content);
  return why === null
    ? null
    : drop('NOT_ABOUT_USER', `slot "${p.slot}" holds facts about the user; ${why}`);
};

const retractedClaim: Rule = (p, ctx) => {
  const citedAt = ctx.citedTurn?.recordedAt.getTime() ?? Number.NEGATIVE_INFINITY;
  const claim = ctx.retractedClaims.find(
    (c) =>
      !(citedAt > c.retractedAt.getTime()) &&
      // "moved to Tuesday" and "not moved to Tuesday" share every content word but say opposite
      // things: the correction of a retracted claim must not be dropped as its re-assertion.
      negates(p.text) === negates(c.text) &&
      similarity(p.text, c.text) >= RETRACTED_SIMILARITY_THRESHOLD,
  );
  return claim === undefined
    ? null
    : drop(
        'RETRACTED_CLAIM',
        `re-asserts a retracted claim ("${claim.text}") on evidence no newer than its retraction`,
      );
};

const duplicate: Rule = (p, ctx) => {
  const text = normalizeForQuote(p.text);
  return ctx.liveOrPendingTexts.includes(text)
    ? drop('DUPLICATE', `slot "${p.slot}" already holds this text, live or pending`)
    : null;
};

/** In order; the first that fails decides. */
const RULES: readonly Rule[] = [
  invalidProposal,
  hiddenText,
  unknownSlot,
  summaryAspect,
  noEvidence,
  originMismatch,
  turnNotFound,
  quoteRules,
  receiptRule,
  correctionEvent,
  absentReferent,
  notAboutUser,
  retractedClaim,
  duplicate,
];

/**
 * Judge one proposal. A proposal that passes every rule is `ok`, with the attestation of its
 * quote: `asserted` when the user states the claim in their own voice as fact, else the verdict
 * that says what the sentence does instead (a question, a hedge, a denial, someone else's). An
 * unattested proposal still reaches the pile, flagged with its verdict and reason, because a real
 * quote can be used to prove a relation it never stated. An action is attested by its checked
 * receipt, never by the wording of the agent's own reply.
 */
export function checkProposal(p: Proposal, ctx: GateContext): GateVerdict {
  for (const rule of RULES) {
    const verdict = rule(p, ctx);
    if (verdict !== null) return verdict;
  }
  if (ctx.slot?.rule === 'action') return { ok: true, attested: true, attestation: null };
  const turn = ctx.citedTurn;
  const attestation =
    turn === null
      ? { verdict: 'not_found' as const, reason: 'the cited turn is not in the record' }
      : attest(p.text, p.evidence?.quote ?? '', turn.content);
  return { ok: true, attested: attestation.verdict === 'asserted', attestation };
}
