import { canonicalEncode } from './canonical.js';
import { EngineError } from './errors.js';
import { foldPhrase, type ForgetScope, type ForgetTargets } from './forget.js';

/**
 * Forgetting under a policy the owner signed (docs/TRUST.md, "Forgetting under a policy"): the
 * owner may let the user's own quoted forget requests be honoured at once, and keep turns only so
 * many days. Such a forget has no signature of its own, so it may remove only what the owner never
 * signed: history, pending proposals, the dropped log, unsigned ledger rows. What the owner signed
 * (an approved or rejected fact, a signed retraction) leaves only by a signed forget. Pure.
 */

/** What a `policy` link signs. */
export interface ForgetPolicy {
  /** Honour the user's own quoted forget requests at once, within `requestWithinPolicy`. */
  honourRequests: boolean;
  /** Forget turns older than this many days (except what a signed decision rests on); null: keep. */
  retainDays: number | null;
}

/** The policy of a chain with no `policy` link: nothing is forgotten without a signature. */
export const NO_FORGET_POLICY: ForgetPolicy = { honourRequests: false, retainDays: null };

/** The proposalId a policy link names (one policy per subject; the last link is in effect). */
export const FORGET_POLICY_TARGET = 'policy:forget';

/** The longest retention a rule may name: 100 years. */
export const MAX_RETAIN_DAYS = 36_500;

/** The policy link's note: the policy, canonically encoded (its SHA-256 is the content hash). */
export function forgetPolicyNote(p: ForgetPolicy): string {
  return canonicalEncode({
    v: 1,
    kind: 'memledger.forget-policy',
    honourRequests: p.honourRequests,
    retainDays: p.retainDays,
  });
}

/**
 * The policy a link's note signs, or NO_FORGET_POLICY when the note is not one (a link whose note
 * does not hash to its content hash, or does not parse, allows nothing).
 */
export function parseForgetPolicyNote(
  note: string,
  contentHash: string,
  sha256Hex: (s: string) => string,
): ForgetPolicy {
  if (sha256Hex(note) !== contentHash) return NO_FORGET_POLICY;
  try {
    const p = JSON.parse(note) as Record<string, unknown> | null;
    if (p?.kind !== 'memledger.forget-policy') return NO_FORGET_POLICY;
    const days = p.retainDays;
    const retainDays =
      typeof days === 'number' && Number.isSafeInteger(days) && days >= 1 && days <= MAX_RETAIN_DAYS
        ? days
        : null;
    return { honourRequests: p.honourRequests === true, retainDays };
  } catch {
    return NO_FORGET_POLICY;
  }
}

/** A retention in days as given: a whole number from 1 to MAX_RETAIN_DAYS, or INVALID_ARGUMENT. */
export function readRetainDays(v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > MAX_RETAIN_DAYS) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `retainDays must be a whole number of days from 1 to ${MAX_RETAIN_DAYS}`,
      { data: { field: 'retainDays' } },
    );
  }
  return v;
}

/** The instant before which a retention of `days` forgets turns. */
export const retentionCutoff = (now: Date, days: number): Date =>
  new Date(now.getTime() - days * 86_400_000);

/** Words that ask to forget. English only: a request in other words waits for the owner. */
const CUE = /\b(forget|erase|delete|wipe|purge|unlearn|stop remembering)\b/gi;
/** A word that turns a cue after it, in the same sentence, into its opposite or a report. */
const NEGATION =
  /\b(don'?t|do not|doesn'?t|does not|didn'?t|did not|never|not|no|won'?t|will not|can'?t|cannot|shouldn'?t|should not|mustn'?t|must not|wouldn'?t|would not|couldn'?t|could not|dare)\b/i;
/** A question about something, not a request ("How do I delete my account?"). */
const ASKS_ABOUT = /^\W*(how|what|why|when|where|who|which|whether)\b/i;

/** Text as the cue reader reads it: NFKC, no format characters, one kind of apostrophe. */
const plain = (s: string): string =>
  s
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .replace(/[\u2018\u2019\u02BC\u0060\u00B4]/g, "'");

/** A text's sentences (split after . ! ? ; and line breaks), as the cue reader reads them. */
const sentences = (s: string): string[] =>
  plain(s)
    .split(/(?<=[.!?;\n])\s*/)
    .filter((x) => x.trim() !== '');

/** Whether one sentence asks to forget: a cue with no negation before it, and no wh-question. */
function sentenceAsks(sentence: string): boolean {
  if (ASKS_ABOUT.test(sentence)) return false;
  for (const m of sentence.matchAll(CUE)) {
    if (!NEGATION.test(sentence.slice(0, m.index))) return true;
  }
  return false;
}

/** The sentences of the user's words that ask to forget, folded as phrases are. */
export const askingSentences = (said: string): string[] =>
  sentences(said)
    .filter(sentenceAsks)
    .map((x) => foldPhrase(x));

/** Whether the user's words ask to forget something (some sentence of them does). */
export const asksToForget = (said: string): boolean => askingSentences(said).length > 0;

/**
 * Why a request may not be honoured at once under the policy, or null when it may. It is read
 * against the whole turn the user said it in (`said`), not only the quote the agent chose: a
 * sentence of that turn must ask to forget (not "don't forget…", not "how do I delete…"), the
 * quote must lie in such a sentence, and the request reach no further than it does: a phrase that
 * sentence holds, or a turn or the whole of the conversation it was said in. A fact, everything,
 * or anything beyond waits for the owner.
 */
export function requestWithinPolicy(
  policy: ForgetPolicy,
  r: { sessionId: string; quote: string; said: string; scope: ForgetScope },
): string | null {
  if (!policy.honourRequests) return 'the owner has not signed a policy that honours requests';
  const quote = foldPhrase(plain(r.quote));
  const asking = askingSentences(r.said).filter((x) => x.includes(quote) || quote.includes(x));
  if (asking.length === 0) return "the user's words quoted do not ask to forget";
  const s = r.scope;
  if (s.kind === 'phrase') {
    const phrase = foldPhrase(plain(s.phrase));
    return asking.some((x) => x.includes(phrase))
      ? null
      : 'the phrase is not in the words where the user asks to forget';
  }
  if (s.kind === 'turn' || s.kind === 'session') {
    return s.session === r.sessionId
      ? null
      : 'it reaches beyond the conversation the user asked in';
  }
  return `a ${s.kind === 'subject' ? 'forget of everything' : 'forget of a fact'} needs the owner's signature`;
}

/** What a forget under a policy would remove that the owner signed, by id; empty: none. */
export function signedTargets(
  t: ForgetTargets,
  facts: ReadonlyMap<string, { status: string }>,
  chain: { decided: (id: string) => boolean; signedRetraction: (id: string) => boolean },
): { facts: string[]; retractions: string[] } {
  return {
    facts: t.facts.filter((id) => chain.decided(id) || facts.get(id)?.status !== 'proposed'),
    retractions: t.retractions.filter((id) => chain.signedRetraction(id)),
  };
}
