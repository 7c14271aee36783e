/**
 * The check a living summary passes, sentence by sentence, before any of it is stored: every
 * sentence cites the user turns it rests on, and each must say it. Pure: the caller reads the
 * turns and the previous version; the verdicts come out. No model decides anything here.
 */
import type { Citation } from './fact.js';
import { claimsFailure } from './gate-cues.js';
import { hiddenCharacters, MAX_PROPOSAL_TEXT_LENGTH } from './gate-rules.js';
import {
  containsClaim,
  negates,
  RETRACTED_SIMILARITY_THRESHOLD,
  similarity,
} from './text/compare.js';
import { contentTokens, wordForm } from './text/words.js';
import { normalizeForQuote } from './text/fold.js';

/** What the check says of one sentence. `supported` and `kept` go into the summary. */
export const SENTENCE_VERDICTS = [
  'supported',
  'kept',
  'turn_not_found',
  'not_user_turn',
  'unattested',
  'idle_citation',
  'no_citation',
  'retracted_claim',
  'failure_claim',
  'first_person',
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

/** Words a third-person summary sentence has that no turn needs to say. */
const SUBJECT_WORDS = new Set([wordForm('user')]);

/**
 * Whether the cited user turns say the sentence. Stricter than seed 000's `isAttestedBy`, which
 * lets up to 40% of a claim's content words be the writer's own and reads a verbatim quote
 * without its negation: here every content word of the sentence (but "user") must be said in a
 * cited turn, every cited turn must share a word with it (no citation is padding), and each cited
 * turn must agree with the sentence on negation, so "does not" cannot be borrowed from another
 * turn. A bag of words cannot see who did what to whom, nor a negation that moved inside one
 * turn: those are the owner's to read, with the cited turns beside the summary.
 */
function attestation(
  text: string,
  turns: readonly SummaryTurn[],
): { verdict: 'supported' | 'unattested' | 'idle_citation'; reason: string } {
  const wanted = contentTokens(text).filter((w) => !SUBJECT_WORDS.has(w));
  const tokens = new Set(wanted);
  const said = new Set<string>();
  for (const t of turns) {
    const words = contentTokens(t.content);
    if (!words.some((w) => tokens.has(w))) {
      return {
        verdict: 'idle_citation',
        reason: `turn ${t.seq} shares no word with the sentence: it is cited without saying any of it`,
      };
    }
    for (const w of words) said.add(w);
  }
  const which = `turn${turns.length === 1 ? '' : 's'} ${turns.map((t) => t.seq).join(', ')}`;
  const missing = wanted.filter((w) => !said.has(w));
  if (wanted.length === 0 || missing.length > 0) {
    return {
      verdict: 'unattested',
      reason:
        wanted.length === 0
          ? 'the sentence says nothing a turn could say'
          : `${which} never say${turns.length === 1 ? 's' : ''} "${missing.slice(0, 5).join('", "')}"`,
    };
  }
  const flipped = turns.find((t) => negates(t.content) !== negates(text));
  if (flipped !== undefined) {
    return {
      verdict: 'unattested',
      reason: `turn ${flipped.seq} ${negates(text) ? 'negates nothing the sentence negates' : 'holds a negation the sentence drops'}`,
    };
  }
  return { verdict: 'supported', reason: `${which} say every word of it` };
}

/** A line break, a control character (ESC…) or a line/paragraph separator. */
const CONTROL = /[\p{Cc}\u0085\u2028\u2029]/u;
/** The writer speaking as itself: a summary is about the user, in the third person. */
const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|us|our|ours)\b/u;

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
  /** The ledger's standing retractions: a summary does not re-assert one (the gate's rule). */
  retracted?: ReadonlyArray<{ text: string; retractedAt: Date }>;
  /** The gate's failure-to-recall cues: a summary records no failure to recall. */
  failureCues?: readonly string[];
}): SummaryCheck {
  const sameAs = (text: string) =>
    `${negates(text) ? 'not ' : ''}${contentTokens(text)
      .filter((w) => !SUBJECT_WORDS.has(w))
      .join(' ')}`;
  const previousByText = new Map(input.previous.map((p) => [normalizeForQuote(p.text), p]));
  const shownById = new Map([...input.shown.values()].map((t) => [t.id, t]));
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
    if (CONTROL.test(text)) {
      out(
        text,
        'hidden_characters',
        'the sentence holds a line break or a control character: a summary line is one line',
      );
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
    if (seen.has(sameAs(text))) {
      out(text, 'invalid', 'the summary already says this sentence');
      return;
    }
    if (FIRST_PERSON.test(norm)) {
      out(
        text,
        'first_person',
        'the sentence speaks in the first person: a summary says what the user said, in the third person',
      );
      return;
    }
    if (input.failureCues !== undefined && claimsFailure(text, input.failureCues)) {
      out(
        text,
        'failure_claim',
        'the sentence claims a failure to recall: a summary records what the user said, never a failure (corrections go through the gate)',
      );
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
      if (before.citations.length === 0) {
        out(text, 'no_citation', 'the previous version cites no turn for this sentence');
        return;
      }
      const cited = before.citations.map((c) => input.previousTurns.get(c.turn));
      const missing = before.citations.find((_, k) => cited[k] === undefined);
      if (missing !== undefined) {
        out(
          text,
          'turn_not_found',
          `the previous version's citation #${missing.seq} is no longer in the record`,
        );
        return;
      }
      const turnsNow = cited as SummaryTurn[];
      const notUser = turnsNow.find((t) => t.role !== 'user');
      if (notUser !== undefined) {
        out(
          text,
          'not_user_turn',
          `the previous version cites turn ${notUser.seq}, a ${notUser.role} turn; only the user's own words support a summary`,
        );
        return;
      }
      const checked = attestation(text, turnsNow);
      // the citations as the turns stand now, not as the previous rows say
      verdict =
        checked.verdict === 'supported'
          ? {
              verdict: 'kept',
              reason: 'kept from the previous version; its turns still say it',
              citations: turnsNow.map(citationOf),
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
    // the gate's RETRACTED_CLAIM, held to a sentence that may say more than the claim: it stands
    // only if the turns newer than the retraction say it on their own (one newer turn cited
    // beside the old ones is not a new source)
    const citedTurns = verdict.citations.flatMap((c) => {
      const t = input.previousTurns.get(c.turn) ?? shownById.get(c.turn);
      return t === undefined ? [] : [t];
    });
    const claim = (input.retracted ?? []).find((c) => {
      const says =
        (negates(text) === negates(c.text) &&
          similarity(text, c.text) >= RETRACTED_SIMILARITY_THRESHOLD) ||
        containsClaim(text, c.text);
      if (!says) return false;
      const newer = citedTurns.filter((t) => t.recordedAt.getTime() > c.retractedAt.getTime());
      return newer.length === 0 || attestation(text, newer).verdict !== 'supported';
    });
    if (claim !== undefined) {
      out(
        text,
        'retracted_claim',
        `re-asserts a retracted claim ("${claim.text}") on turns no newer than its retraction`,
      );
      return;
    }
    const length = [...text].length + (kept.length === 0 ? 0 : 1);
    if (size + length > MAX_SUMMARY_CHARS) {
      out(text, 'invalid', `the summary would pass ${MAX_SUMMARY_CHARS} characters`);
      return;
    }
    size += length;
    seen.add(sameAs(text));
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
    leftOut: input.previous.filter((p) => !seen.has(sameAs(p.text))).length,
  };
}
