import { canonicalEncode } from './canonical.js';
import { EngineError } from './errors.js';

/**
 * Forgetting: what the owner asks to forget, what that comes to in the store, and what the
 * signed `forget` link records of it (ids only: never a word of what was forgotten).
 * docs/TRUST.md, "Forgetting".
 */

/** What the owner asks to forget. */
export type ForgetScope =
  | { kind: 'turn'; session: string; seq: number }
  | { kind: 'session'; session: string }
  | { kind: 'fact'; fact: string }
  /** Everything that holds the phrase (case and spacing folded). */
  | { kind: 'phrase'; phrase: string }
  | { kind: 'subject' };

/** The kinds of `ForgetScope`. */
export const FORGET_SCOPES = ['turn', 'session', 'fact', 'phrase', 'subject'] as const;

/**
 * What a plan can be made for: a scope, or a retention rule's (turns recorded before `before`,
 * except those a fact the owner decided, or that went live, cites).
 */
export type PlanScope = ForgetScope | { kind: 'older'; before: Date };

/** A phrase as matched: lower case, runs of white space as one space, trimmed. */
export const foldPhrase = (p: string): string => p.toLowerCase().replace(/\s+/g, ' ').trim();

/** A run of one session's turns, from `from` to `to` (inclusive). */
export type TurnRange = readonly [session: string, from: number, to: number];

/**
 * What a forget removes, by id: the turns it leaves as tombstones, and the rows it deletes.
 * The link's note is this, canonically encoded (so the chain alone says which facts, ledger rows
 * and turns are gone on the owner's word, and a reader accepts their absence).
 */
export interface ForgetTargets {
  /** The scope's kind (never the phrase itself). */
  scope: PlanScope['kind'];
  turns: TurnRange[];
  /** Sessions whose title is cleared (every turn of them forgotten, or the title held the phrase). */
  sessions: string[];
  facts: string[];
  retractions: string[];
  summaries: string[];
  dropped: string[];
  commitments: string[];
  actions: string[];
  probeRecords: string[];
  /** Forget requests whose words it removes (answered by it: honoured, their words cleared). */
  requests: string[];
}

/** Targets that name only what `some` gives, every other list empty. */
export function targetsOf(
  scope: PlanScope['kind'],
  some: Partial<Omit<ForgetTargets, 'scope'>>,
): ForgetTargets {
  return {
    scope,
    turns: [],
    sessions: [],
    facts: [],
    retractions: [],
    summaries: [],
    dropped: [],
    commitments: [],
    actions: [],
    probeRecords: [],
    requests: [],
    ...some,
  };
}

/** The proposalId a forget link names: the forget's id, prefixed so no proposal id can equal it. */
export const forgetTarget = (forgetId: string): string => `forget:${forgetId}`;

/** Sorted, distinct. */
const ids = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

/** Turns (session, seq) as runs of consecutive seqs, sorted by session and seq. */
export function turnRanges(turns: Iterable<readonly [string, number]>): TurnRange[] {
  const bySession = new Map<string, number[]>();
  for (const [s, seq] of turns) {
    const all = bySession.get(s) ?? [];
    all.push(seq);
    bySession.set(s, all);
  }
  const out: TurnRange[] = [];
  for (const s of [...bySession.keys()].sort()) {
    const seqs = [...new Set(bySession.get(s))].sort((a, b) => a - b);
    let from = seqs[0] as number;
    let to = from;
    for (const seq of seqs.slice(1)) {
      if (seq === to + 1) {
        to = seq;
        continue;
      }
      out.push([s, from, to]);
      from = to = seq;
    }
    if (seqs.length > 0) out.push([s, from, to]);
  }
  return out;
}

/** How many turns `ranges` hold. */
export const turnCount = (ranges: readonly TurnRange[]): number =>
  ranges.reduce((n, [, from, to]) => n + to - from + 1, 0);

/** Targets in one order, whatever order they were found in. */
export function normalTargets(t: ForgetTargets): ForgetTargets {
  return {
    scope: t.scope,
    turns: turnRanges(t.turns.flatMap(([s, from, to]) => seqsOf(s, from, to))),
    sessions: ids(t.sessions),
    facts: ids(t.facts),
    retractions: ids(t.retractions),
    summaries: ids(t.summaries),
    dropped: ids(t.dropped),
    commitments: ids(t.commitments),
    actions: ids(t.actions),
    probeRecords: ids(t.probeRecords),
    requests: ids(t.requests),
  };
}

function seqsOf(s: string, from: number, to: number): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (let seq = from; seq <= to; seq++) out.push([s, seq]);
  return out;
}

/** The forget link's note: its targets, canonically encoded. */
export function forgetNote(t: ForgetTargets): string {
  const n = normalTargets(t);
  return canonicalEncode({
    v: 1,
    kind: 'memledger.forget',
    scope: n.scope,
    turns: n.turns.map(([s, from, to]) => [s, from, to]),
    sessions: n.sessions,
    facts: n.facts,
    retractions: n.retractions,
    summaries: n.summaries,
    dropped: n.dropped,
    commitments: n.commitments,
    actions: n.actions,
    probeRecords: n.probeRecords,
    requests: n.requests,
  });
}

const strings = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null;

/**
 * The targets a forget link's note names, or null when the note is not one (a link whose note
 * is not one forgets nothing). `contentHash` must be the note's SHA-256, as the link sealed it.
 */
export function parseForgetNote(
  note: string,
  contentHash: string,
  sha256Hex: (s: string) => string,
): ForgetTargets | null {
  if (sha256Hex(note) !== contentHash) return null;
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(note) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (p === null || typeof p !== 'object' || p.kind !== 'memledger.forget') return null;
  const turns = Array.isArray(p.turns)
    ? p.turns.filter(
        (r): r is [string, number, number] =>
          Array.isArray(r) &&
          r.length === 3 &&
          typeof r[0] === 'string' &&
          Number.isSafeInteger(r[1]) &&
          Number.isSafeInteger(r[2]),
      )
    : null;
  const lists = [
    'sessions',
    'facts',
    'retractions',
    'summaries',
    'dropped',
    'commitments',
    'actions',
    'probeRecords',
    'requests',
  ] as const;
  const parsed = Object.fromEntries(lists.map((k) => [k, strings(p[k])]));
  if (turns === null || lists.some((k) => parsed[k] === null)) return null;
  // a retention's note (policy_forgets) says `older`; a forget link's, one of FORGET_SCOPES
  const scope = ([...FORGET_SCOPES, 'older'] as readonly unknown[]).includes(p.scope)
    ? (p.scope as PlanScope['kind'])
    : null;
  if (scope === null) return null;
  return { scope, turns, ...(parsed as Record<(typeof lists)[number], string[]>) };
}

/** What a forget comes to, for the owner to confirm: the targets, and what they hold. */
export interface ForgetPlan {
  scope: PlanScope;
  targets: ForgetTargets;
  /** Live facts the forget would take down that the owner did not name (refused without withFacts). */
  liveFacts: Array<{ id: string; slot: string; text: string }>;
  /**
   * Of `targets.requests` (whose words it removes): the pending ones it answers (the request it
   * honours; one whose own phrase holds the forgotten one; every one, forgetting everything), and
   * those whose phrase it clears. The others keep their status, their quote cleared.
   */
  requests: { answered: string[]; scopesCleared: string[] };
}

/** A plan in numbers, for a line of output. */
export function planCounts(t: ForgetTargets): Record<string, number> {
  return {
    turns: turnCount(t.turns),
    sessions: t.sessions.length,
    facts: t.facts.length,
    retractions: t.retractions.length,
    summaries: t.summaries.length,
    dropped: t.dropped.length,
    commitments: t.commitments.length,
    actions: t.actions.length,
    probeRecords: t.probeRecords.length,
    requests: t.requests.length,
  };
}

/** What each count of a plan counts, in one and many. */
export const COUNT_NAMES: Readonly<Record<string, readonly [string, string]>> = {
  turns: ['turn', 'turns'],
  sessions: ['session title', 'session titles'],
  facts: ['fact', 'facts'],
  retractions: ['retraction', 'retractions'],
  summaries: ['summary', 'summaries'],
  dropped: ['dropped proposal', 'dropped proposals'],
  commitments: ['commitment', 'commitments'],
  actions: ['action', 'actions'],
  probeRecords: ['probe record', 'probe records'],
  requests: ['forget request', 'forget requests'],
};

/** A plan's counts in words: "1 turn, 2 facts and 1 summary", or "nothing". */
export function countsLine(counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => {
      const [one, many] = COUNT_NAMES[k] ?? [k, k];
      return `${n} ${n === 1 ? one : many}`;
    });
  if (parts.length === 0) return 'nothing';
  if (parts.length === 1) return parts[0] ?? '';
  return `${parts.slice(0, -1).join(', ')} and ${parts.at(-1) ?? ''}`;
}

/** Whether a plan removes nothing. */
export const planIsEmpty = (t: ForgetTargets): boolean =>
  Object.values(planCounts(t)).every((n) => n === 0);

/** The shortest phrase a forget matches by (a shorter one would match too much to mean it). */
export const MIN_FORGET_PHRASE = 3;

const badScope = (why: string): EngineError =>
  new EngineError('INVALID_ARGUMENT', `scope ${why}`, { data: { field: 'scope' } });

/** A scope as given (library, HTTP body), checked: exactly one of its shapes, or INVALID_ARGUMENT. */
export function readForgetScope(v: unknown): ForgetScope {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw badScope(`must be an object with a kind (${FORGET_SCOPES.join(', ')})`);
  }
  const o = v as Record<string, unknown>;
  const str = (k: string): string => {
    const x = o[k];
    if (typeof x !== 'string' || x.trim() === '') throw badScope(`needs ${k}, a non-empty string`);
    return x;
  };
  switch (o.kind) {
    case 'turn': {
      const seq = o.seq;
      if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) {
        throw badScope('needs seq, the turn number (1 or more)');
      }
      return { kind: 'turn', session: str('session'), seq };
    }
    case 'session':
      return { kind: 'session', session: str('session') };
    case 'fact':
      return { kind: 'fact', fact: str('fact') };
    case 'phrase': {
      const phrase = str('phrase');
      if ([...phrase.replace(/\s+/g, ' ').trim()].length < MIN_FORGET_PHRASE) {
        throw badScope(`phrase must be at least ${MIN_FORGET_PHRASE} characters`);
      }
      return { kind: 'phrase', phrase };
    }
    case 'subject':
      return { kind: 'subject' };
    default:
      throw badScope(`kind must be one of ${FORGET_SCOPES.join(', ')}`);
  }
}

/** What a forget request is waiting for, or what became of it. */
export const FORGET_REQUEST_STATUSES = ['pending', 'honoured', 'declined'] as const;
/** One of `FORGET_REQUEST_STATUSES`. */
export type ForgetRequestStatus = (typeof FORGET_REQUEST_STATUSES)[number];

/**
 * An agent's request to forget, for the owner to decide: the user's own words asking for it,
 * quoted from a user turn (as a proposal quotes its evidence), and what to forget. Honoured, its
 * words are cleared with what it forgot (its quote empty, its scope its kind alone).
 */
export interface ForgetRequest {
  id: string;
  subjectId: string;
  sessionId: string;
  /** The user turn whose words ask for it. */
  turn: number;
  quote: string;
  scope: ForgetScope | { kind: ForgetScope['kind'] };
  requestedBy: string;
  recordedAt: Date;
  status: ForgetRequestStatus;
  decidedAt: Date | null;
  /** The forget that honoured it. */
  forgetId: string | null;
}
