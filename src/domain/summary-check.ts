/**
 * The check a living summary passes, sentence by sentence, before any of it is stored: every
 * sentence cites the user turns it rests on, and each must say it. Pure: the caller reads the
 * turns and the previous version; the verdicts come out. No model decides anything here.
 */
import type { Citation } from './fact.js';
import { hiddenCharacters, MAX_PROPOSAL_TEXT_LENGTH } from './gate-rules.js';
import { contentTokens, isAttestedBy, normalizeForQuote } from './text-normalize.js';

/** What the check says of one sentence. `supported` and `kept` go into the summary. */
export const SENTENCE_VERDICTS = [
  'supported',
  'kept',
  'turn_not_found',
  'not_user_turn',
  'unattested',
  'idle_citation',
  'no_citation',
  'hidden_characters',
  'invalid',
] as const;
/** One of `SENTENCE_VERDICTS`. */
export type SentenceVerdict = (typeof SENTENCE_VERDICTS)[number];

/** The most sentences one summary may hold; more is a runaway, not a summary. */
export const MAX_SUMMARY_SENTENCES = 50;
/** The most turns one sentence may cite. */
export const MAX_SENTENCE_CITATIONS = 12;
/** The longest summary text, in characters: what is kept stops there. */
export const MAX_SUMMARY_CHARS = 6000;

/** A turn as the check reads it. */
export interface SummaryTurn {
  id: string;
  sessionId: string;
  seq: number;
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string;
  recordedAt: Date;
}

/** A sentence of the previous version that went into it, with the turns it cited. */
export interface PreviousSentence {
  text: string;
  citations: readonly Citation[];
}

/** One checked sentence, in the model's order. */
export interface CheckedSentence {
  position: number;
  /** The sentence as written ('' when it was not a string). */
  text: string;
  /** The turns it cites (resolved ones only; a kept sentence carries the previous citations). */
  citations: Citation[];
  verdict: SentenceVerdict;
  reason: string;
}

/** The check's result: every sentence, what the summary says, and what changed. */
export interface SummaryCheck {
  sentences: CheckedSentence[];
  /** The supported and kept sentences, in order, joined by a space ('' when none). */
  text: string;
  /** The cited turns of the sentences in `text`, in citation order, each once. */
  citations: Citation[];
  /** Sentences in `text` that the previous version also said. */
  kept: number;
  /** Sentences in `text` the previous version did not say. */
  added: number;
  /** Sentences of the previous version that this one no longer says. */
  leftOut: number;
}

const citationOf = (t: SummaryTurn): Citation => ({
  turn: t.id,
  session: t.sessionId,
  seq: t.seq,
  at: t.recordedAt.toISOString(),
});

/**
 * Whether the cited user turns say the sentence (a stricter form of seed 000's `isAttestedBy`):
 * the sentence must be attested by the cited turns' words together, and every cited turn must
 * share at least one content word with it, so a citation cannot be padding that lends a
 * sentence a second source it does not have.
 */
function attestation(
  text: string,
  turns: readonly SummaryTurn[],
): { verdict: 'supported' | 'unattested' | 'idle_citation'; reason: string } {
  const tokens = new Set(contentTokens(text));
  for (const t of turns) {
    if (!contentTokens(t.content).some((w) => tokens.has(w))) {
      return {
        verdict: 'idle_citation',
        reason: `turn ${t.seq} shares no word with the sentence: it is cited without saying any of it`,
      };
    }
  }
  const joined = turns.map((t) => t.content).join('\n');
  return isAttestedBy(text, joined)
    ? { verdict: 'supported', reason: 'the cited user turns say it' }
    : {
        verdict: 'unattested',
        reason: `turn${turns.length === 1 ? '' : 's'} ${turns.map((t) => t.seq).join(', ')} do${turns.length === 1 ? 'es' : ''} not say what the sentence claims`,
      };
}

/**
 * Check a model's sentences. `shown`: the turns the model was shown, by the number it saw;
 * `previous`: the previous version's sentences, with `previousTurns` (their cited turns, by id,
 * as stored now). A sentence with no citation may keep a previous sentence word for word, and is
 * checked again against that sentence's turns; anything else uncited is left out.
 */
export function checkSummary(input: {
  sentences: readonly unknown[];
  shown: ReadonlyMap<number, SummaryTurn>;
  previous: readonly PreviousSentence[];
  previousTurns: ReadonlyMap<string, SummaryTurn>;
}): SummaryCheck {
  const previousByText = new Map(input.previous.map((p) => [normalizeForQuote(p.text), p]));
  const seen = new Set<string>();
  const sentences: CheckedSentence[] = [];
  const kept: string[] = [];
  let size = 0;
  input.sentences.forEach((raw, i) => {
    const position = i + 1;
    const out = (
      text: string,
      verdict: SentenceVerdict,
      reason: string,
      citations: Citation[] = [],
    ) => {
      sentences.push({ position, text, citations, verdict, reason });
    };
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      out('', 'invalid', 'the sentence is not an object with "text" and "turns"');
      return;
    }
    const { text, turns } = raw as Record<string, unknown>;
    if (typeof text !== 'string' || text.trim() === '') {
      out('', 'invalid', 'the sentence has no text');
      return;
    }
    if ([...text].length > MAX_PROPOSAL_TEXT_LENGTH) {
      out(text, 'invalid', `the sentence is longer than ${MAX_PROPOSAL_TEXT_LENGTH} characters`);
      return;
    }
    const hidden = hiddenCharacters(text);
    if (hidden.length > 0) {
      out(
        text,
        'hidden_characters',
        `the sentence holds ${hidden.length} character${hidden.length === 1 ? '' : 's'} a reader does not see`,
      );
      return;
    }
    if (
      !Array.isArray(turns) ||
      turns.length > MAX_SENTENCE_CITATIONS ||
      !turns.every((n) => typeof n === 'number' && Number.isSafeInteger(n))
    ) {
      out(
        text,
        'invalid',
        `"turns" must be a list of at most ${MAX_SENTENCE_CITATIONS} turn numbers`,
      );
      return;
    }
    const norm = normalizeForQuote(text);
    if (seen.has(norm)) {
      out(text, 'invalid', 'the summary already says this sentence');
      return;
    }
    let verdict: { verdict: SentenceVerdict; reason: string; citations: Citation[] };
    if (turns.length === 0) {
      const before = previousByText.get(norm);
      if (before === undefined) {
        out(
          text,
          'no_citation',
          'the sentence cites no turn, and the previous version does not say it',
        );
        return;
      }
      const cited = before.citations.map((c) => input.previousTurns.get(c.turn));
      const missing = before.citations.find((_, k) => cited[k] === undefined);
      if (missing !== undefined || cited.length === 0) {
        out(
          text,
          'turn_not_found',
          `the previous version's citation #${missing?.seq ?? '?'} is no longer in the record`,
        );
        return;
      }
      const checked = attestation(text, cited as SummaryTurn[]);
      verdict =
        checked.verdict === 'supported'
          ? {
              verdict: 'kept',
              reason: 'kept from the previous version; its turns still say it',
              citations: [...before.citations],
            }
          : { ...checked, citations: [] };
    } else {
      const numbers = [...new Set(turns as number[])];
      const cited: SummaryTurn[] = [];
      for (const n of numbers) {
        const t = input.shown.get(n);
        if (t === undefined) {
          out(text, 'turn_not_found', `turn ${n} is not among the turns the summary was shown`);
          return;
        }
        if (t.role !== 'user') {
          out(
            text,
            'not_user_turn',
            `turn ${n} is ${t.role === 'assistant' ? 'an assistant' : `a ${t.role}`} turn; only the user's own words support a summary`,
          );
          return;
        }
        cited.push(t);
      }
      verdict = { ...attestation(text, cited), citations: cited.map(citationOf) };
    }
    if (verdict.verdict !== 'supported' && verdict.verdict !== 'kept') {
      out(text, verdict.verdict, verdict.reason);
      return;
    }
    const length = [...text].length + (kept.length === 0 ? 0 : 1);
    if (size + length > MAX_SUMMARY_CHARS) {
      out(text, 'invalid', `the summary would pass ${MAX_SUMMARY_CHARS} characters`);
      return;
    }
    size += length;
    seen.add(norm);
    kept.push(text.trim());
    out(text, verdict.verdict, verdict.reason, verdict.citations);
  });
  const inText = sentences.filter((s) => s.verdict === 'supported' || s.verdict === 'kept');
  const citations: Citation[] = [];
  const cited = new Set<string>();
  for (const s of inText) {
    for (const c of s.citations) {
      if (cited.has(c.turn)) continue;
      cited.add(c.turn);
      citations.push(c);
    }
  }
  const again = inText.filter((s) => previousByText.has(normalizeForQuote(s.text))).length;
  return {
    sentences,
    text: kept.join(' '),
    citations,
    kept: again,
    added: inText.length - again,
    leftOut: input.previous.filter((p) => !seen.has(normalizeForQuote(p.text))).length,
  };
}
