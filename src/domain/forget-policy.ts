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

/**
 * Words that ask to forget, not negated ("don't forget" asks the opposite). English only: a
 * request in other words waits for the owner.
 */
const CUE = /\b(forget|erase|delete|wipe|purge|unlearn|stop remembering)\b/gi;
const NEGATED =
  /\b(don'?t|do not|never|not|won'?t|can'?t|cannot|shouldn'?t|must not|mustn'?t)\s+(\w+\s+)?$/i;

/** Whether the user's words ask to forget something. */
export function asksToForget(quote: string): boolean {
  const s = quote.replace(/[\u2018\u2019]/g, "'");
  for (const m of s.matchAll(CUE)) {
    if (!NEGATED.test(s.slice(Math.max(0, m.index - 40), m.index))) return true;
  }
  return false;
}

/**
 * Why a request may not be honoured at once under the policy, or null when it may: the user's
 * words must ask to forget, and the request reach no further than those words do (a phrase they
 * contain, or a turn or the whole of the conversation they were said in). A fact, everything, or
 * anything beyond waits for the owner.
 */
export function requestWithinPolicy(
  policy: ForgetPolicy,
  r: { sessionId: string; quote: string; scope: ForgetScope },
): string | null {
  if (!policy.honourRequests) return 'the owner has not signed a policy that honours requests';
  if (!asksToForget(r.quote)) return "the user's quoted words do not ask to forget";
  const s = r.scope;
  if (s.kind === 'phrase') {
    return foldPhrase(r.quote).includes(foldPhrase(s.phrase))
      ? null
      : "the phrase is not in the user's quoted words";
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
