/**
 * The word lists behind two gate rules: what makes a user turn a correction (NO_CORRECTION_EVENT)
 * and what makes a memory claim the agent failed to recall something (ABSENT_REFERENT). All
 * matching is on `normalizeForQuote`d text, on word boundaries, so cues are written in plain
 * lowercase ASCII and still match curly apostrophes and any case.
 */
import { contentTokens, foldedWords } from './text/words.js';
import { indexOfWords, normalizeForQuote } from './text/fold.js';

const words = (list: string): string[] => list.trim().split(/\s+/u);

/**
 * Phrases by which a user tells the agent it got something wrong. A quote may also correct by
 * opening itself or a sentence with "no" used as an interjection (see `hasCorrectionCue`).
 */
export const DEFAULT_CORRECTION_CUES: readonly string[] = [
  "that's wrong",
  'that is wrong',
  "that's not right",
  'that is not right',
  'not true',
  'i never said',
  "i didn't say",
  'i did not say',
  'you got it wrong',
  'incorrect',
  'not correct',
  "that's not what i said",
  'not what i said',
  "you're wrong",
  'you are wrong',
  "you're mistaken",
  'you are mistaken',
  'you misunderstood',
  'wrong',
  'nope',
];

/**
 * Phrases by which a memory claims the agent failed to recall, forgot, missed or left
 * unanswered something earlier, drawn from the twelve stored lines of seed 001 ("a
 * conversation I failed to recall", "missing an opportunity", "validating his memory over my
 * records", "memory gaps", "records didn't align with his recollection") and the second plant
 * ("a message I never replied to").
 */
export const DEFAULT_FAILURE_CUES: readonly string[] = [
  'failed to recall',
  'failing to recall',
  'fail to recall',
  'failure to recall',
  'failed to remember',
  'failing to remember',
  "didn't remember",
  'did not remember',
  "couldn't remember",
  'could not remember',
  "didn't recall",
  'did not recall',
  "couldn't recall",
  'could not recall',
  'forgot',
  'forgotten',
  'forgetting',
  'slipped my mind',
  'lost track',
  'missed your message',
  'missed your messages',
  'missed a message',
  'missed the message',
  'missed our conversation',
  'missed the conversation',
  'missed your question',
  'missed the question',
  'missed an opportunity',
  'missing an opportunity',
  'never replied',
  'never responded',
  "didn't reply",
  'did not reply',
  "didn't respond",
  'did not respond',
  'failed to reply',
  'failed to respond',
  'left unanswered',
  'memory gap',
  'memory gaps',
  'gaps in my memory',
  'failed to validate',
  'failing to validate',
  'fail to validate',
  "records didn't align",
  'records did not align',
  "didn't align with my records",
  'discrepancy between my records',
];

/**
 * Words a failure claim uses about itself rather than about what was supposedly missed: who,
 * through what channel, and the vocabulary of self-blame. What is left after removing these, the
 * cue words and stopwords is the referent: the topic an earlier turn would have to mention.
 */
export const GENERIC_REFERENT_WORDS: readonly string[] = words(`
  user users owner message messages conversation conversations chat talk talked discussion
  discussed question questions asked ask asking said say told tell mention mentioned reply
  replied replies respond responded response sent send recall recalled remember remembered
  record records memory memories recollection earlier recently recent previous previously
  before occurred happened failed failing fail failure forgot forgotten forget missed missing
  miss corrected correction corrections correct validate validating validated acknowledge
  acknowledging discrepancy pattern deeper deep significance significant gap gaps opportunity
  trust over mine directly highlighting highlight continuous immediately after despite align
  aligned internal agent assistant time thing things
`);

/** A cue right after one of these words is not corrective: "nothing wrong", "went wrong". */
const NOT_CORRECTIVE_BEFORE = new Set(
  words(`
    not never nothing no isn't wasn't aren't weren't anything went go goes going gone what's
  `),
);
/** Words that can follow an interjected "no" without punctuation: "No I said Tuesday". */
const AFTER_INTERJECTED_NO = new Set(
  words(`
    i i'm i've i'd it it's its that that's this you you're we we're they he she the my your
    actually wait sorry not never nope wrong
  `),
);
/** "No, thanks" declines, it does not correct. */
const POLITE_AFTER_NO = new Set(['thanks', 'thank', 'problem', 'worries', 'worry', 'need']);
/** Words between a subject and a failure cue: "the user has often forgotten". */
const SUBJECT_FILLERS = new Set(
  words(`
    has had have was is also just often sometimes always apparently probably keeps kept then
    again
  `),
);
/** A failure attributed to the user is a fact about the user, not the agent's self-blame. */
const USER_SUBJECTS = new Set(['user', 'users', 'owner', 'he', 'she', 'they']);

function wordsBefore(text: string, at: number): string[] {
  return foldedWords(text.slice(0, at)).reverse();
}

/** Cue lists are configuration, normalized once; the cap keeps an odd caller from growing it. */
const NORMALIZED_CUES = new Map<string, string>();

function normalizedCue(cue: string): string {
  let needle = NORMALIZED_CUES.get(cue);
  if (needle === undefined) {
    if (NORMALIZED_CUES.size >= 10_000) NORMALIZED_CUES.clear();
    needle = normalizeForQuote(cue);
    NORMALIZED_CUES.set(cue, needle);
  }
  return needle;
}

function* cueMatches(text: string, cue: string): Generator<number> {
  const needle = normalizedCue(cue);
  for (let at = indexOfWords(text, needle); at !== -1; at = indexOfWords(text, needle, at + 1)) {
    yield at;
  }
}

function correctiveCueIn(text: string, cue: string): boolean {
  for (const at of cueMatches(text, cue)) {
    const previous = wordsBefore(text, at)[0];
    if (previous === undefined || !NOT_CORRECTIVE_BEFORE.has(previous)) return true;
  }
  return false;
}

/** Where an interjected "no" can stand: the start, after . ! ? ; : or after "well", "oh", … */
const SENTENCE_NO =
  /(?:^|[.!?;:]\s*|(?<![\p{L}\p{N}'])(?:well|oh|ah|uh|um|hmm|actually),?\s+)["'([]*no(?![\p{L}\p{N}'])/gu;

function interjectedNo(text: string): boolean {
  for (const match of text.matchAll(SENTENCE_NO)) {
    const rest = text.slice(match.index + match[0].length);
    const punctuated = /^\s*[,!.;:-]/u.test(rest) || rest.trim() === '';
    const next = /[\p{L}\p{N}']+/u.exec(rest)?.[0];
    if (/^\.\s*\d/u.test(rest)) continue; // "No. 5" is a number
    if (punctuated && (next === undefined || !POLITE_AFTER_NO.has(next))) return true;
    if (!punctuated && next !== undefined && AFTER_INTERJECTED_NO.has(next)) return true;
  }
  return false;
}

/**
 * Whether a quoted user sentence corrects the agent: it contains one of `cues` (not right after a
 * negation or "went": "nothing wrong", "went wrong"), or it or one of its sentences opens (after
 * "well", "oh", "actually" at most) with an interjected "no": followed by punctuation ("No, …",
 * "No!", but not "No, thanks"), or by a word that cannot follow the determiner "no" ("No I said
 * Tuesday", "No it's Thursday"). "No record" and "I have no idea" do not correct.
 */
export function hasCorrectionCue(quote: string, cues: readonly string[]): boolean {
  const text = normalizeForQuote(quote);
  return cues.some((cue) => correctiveCueIn(text, cue)) || interjectedNo(text);
}

function isUserSubject(text: string, at: number): boolean {
  const subject = wordsBefore(text, at).find((word) => !SUBJECT_FILLERS.has(word));
  return subject !== undefined && USER_SUBJECTS.has(subject);
}

/**
 * The cues by which `text` claims a failure of the agent's, in list order. A cue is not counted
 * where its subject in the text is the user AND the user's own quoted words contain the same cue:
 * "The user forgot his keys" quoting "I forgot my keys" reports the user's lapse in their words.
 * Without such a quote ("The user has memory gaps"), the claim is the agent's and is counted.
 */
export function findFailureCues(text: string, cues: readonly string[], userWords = ''): string[] {
  const normalized = normalizeForQuote(text);
  const quoted = normalizeForQuote(userWords);
  return cues.filter((cue) => {
    const userSaidIt = indexOfWords(quoted, normalizedCue(cue)) !== -1;
    for (const at of cueMatches(normalized, cue)) {
      if (!userSaidIt || !isUserSubject(normalized, at)) return true;
    }
    return false;
  });
}

const GENERIC_TOKENS: ReadonlySet<string> = new Set(
  contentTokens(GENERIC_REFERENT_WORDS.join(' ')),
);

const CUE_TOKENS = new WeakMap<readonly string[], ReadonlySet<string>>();

/** The words of a cue list, tokenized once per list. */
function cueTokensOf(cues: readonly string[]): ReadonlySet<string> {
  let tokens = CUE_TOKENS.get(cues);
  if (tokens === undefined) {
    tokens = new Set(contentTokens(cues.join(' ')));
    CUE_TOKENS.set(cues, tokens);
  }
  return tokens;
}

/**
 * Whether the text claims the agent failed to recall, forgot, missed or left unanswered
 * something; such a claim needs a referent. Without `userWords` (the proposal's quote) every cue
 * counts, so a caller pre-filtering earlier turns with it fetches a superset of what is needed.
 */
export function claimsFailure(text: string, cues: readonly string[], userWords?: string): boolean {
  return findFailureCues(text, cues, userWords).length > 0;
}

/**
 * The topic a failure claim says was missed: its content tokens minus the words of `cues`, minus
 * `GENERIC_REFERENT_WORDS`. "I failed to recall the user's question about the vendor contract"
 * → ['vendor', 'contract'].
 */
export function referentTokens(text: string, cues: readonly string[]): string[] {
  const cueTokens = cueTokensOf(cues);
  return contentTokens(text).filter((t) => !cueTokens.has(t) && !GENERIC_TOKENS.has(t));
}

/** Whether a turn mentions a referent: at least half (rounded up) of its tokens, stemmed. */
export function mentionsReferent(turnText: string, referent: readonly string[]): boolean {
  if (referent.length === 0) return false;
  const tokens = new Set(contentTokens(turnText));
  const found = referent.filter((t) => tokens.has(t)).length;
  return found >= Math.ceil(referent.length / 2);
}
