import {
  retractionPayload,
  type RetractionContent,
  delegationPayload,
  textWithinBound,
  type DelegationBound,
  type ChainBreakCode,
  type ChainCrypto,
} from './decision-chain.js';
import type { Fact, FactStatus } from './fact.js';
import {
  factContentHash,
  type ChainBreak,
  type ChainState,
  type DelegationEntry,
} from './chain-state.js';
import type { FactId } from './ids.js';
import { oneLine, shownId } from './shown-text.js';

/**
 * Live means signed: which stored facts a model may be shown, decided from the owner's verified
 * decision chain, the ledger and the receipts, never from the status column alone. Pure: the
 * store reads, the caching and the crypto are the caller's (src/trust/).
 */

/** A slot whose stored auto-live setting no signed delegation accounts for. */
export interface DelegationProblem {
  slot: string;
  /** The delegation link it differs from; null: the slot has none. */
  seq: number | null;
  code: ChainBreakCode;
  reason: string;
}

/**
 * Slots whose stored auto-live setting is not what their last verified delegation link signed:
 * auto-live (or naming tools) with no delegation, or another setting than the link's. Such a row
 * has no effect on what is live (the links decide), but it is a tamper, and every read names it.
 * `slots`: the rows as stored; a delegated slot with no row counts as not auto-live.
 */
export function delegationProblems(
  state: ChainState,
  slots: ReadonlyArray<{ name: string; autoLive: boolean; tools?: readonly string[] | null }>,
): DelegationProblem[] {
  const rows = new Map(slots.map((s) => [s.name, s]));
  const names = [...new Set([...rows.keys(), ...state.delegations.keys()])].sort();
  const out: DelegationProblem[] = [];
  for (const name of names) {
    const row = rows.get(name);
    const autoLive = row?.autoLive ?? false;
    const tools = [...new Set(row?.tools ?? [])].sort();
    const d = state.delegations.get(name);
    if (d === undefined) {
      if (autoLive || tools.length > 0) {
        out.push({
          slot: name,
          seq: null,
          code: 'UNSIGNED_DELEGATION',
          reason: `slot "${name}" is auto-live with no signed delegation`,
        });
      }
    } else if (d.autoLive !== autoLive || d.tools.join('\u0000') !== tools.join('\u0000')) {
      out.push({
        slot: name,
        seq: d.seq,
        code: 'DELEGATION_CHANGED',
        reason: `slot "${name}" differs from its delegation at link ${d.seq}`,
      });
    }
  }
  return out;
}

/** The note a delegation link carries (see parseDelegationNote). */
export function delegationNote(
  autoLive: boolean,
  tools: readonly string[],
  bound: DelegationBound | null = null,
): string {
  return JSON.stringify({
    autoLive,
    tools: [...new Set(tools)].sort(),
    ...(bound === null ? {} : { bound }),
  });
}

/** Answers of delegationMatches, per delegation entry (its fields never change once made). */
const delegationAnswers = new WeakMap<object, { key: string; matches: boolean }>();

/** Whether a delegation link's content hash matches what its note says (a forged note does not). */
export function delegationMatches(
  subjectId: string,
  slot: string,
  d: Pick<DelegationEntry, 'autoLive' | 'tools' | 'contentHash' | 'bound'>,
  crypto: Pick<ChainCrypto, 'sha256Hex'>,
): boolean {
  const key = `${subjectId}\u0000${slot}\u0000${d.contentHash}\u0000${String(d.autoLive)}\u0000${d.tools.join('\u0000')}\u0000${JSON.stringify(d.bound)}`;
  const known = delegationAnswers.get(d);
  if (known !== undefined && known.key === key) return known.matches;
  const matches =
    crypto.sha256Hex(
      delegationPayload({ subjectId, slot, autoLive: d.autoLive, tools: d.tools, bound: d.bound }),
    ) === d.contentHash;
  delegationAnswers.set(d, { key, matches });
  return matches;
}

/** How a fact stored as live came to be (the `promoted_by` column), with what backs it. */
export interface ActiveFactEvidence {
  fact: Fact;
  promotedBy: 'owner' | 'receipt' | 'restoration' | null;
  /** The tools on the cited turn's receipt, when it says tools ran. */
  receiptTools: readonly string[] | null;
  /** The ledger rows that name this fact (an overturned one is not among them). */
  retractions: readonly RetractionContent[];
  /** For a restoration: the original, and whether a probe-settled overturn names this copy. */
  restoration: { original: Fact | null; settled: boolean } | null;
  /** factContentHash(fact), when the caller has it already (it caches it per row version). */
  contentHash?: string;
}

/** A fact the chain keeps live that the store no longer shows as live, with what explains it. */
export interface DepartedFactEvidence {
  id: string;
  slot: string;
  key: string | null;
  status: FactStatus;
  validTo: Date | null;
  /** The ledger row its retraction_id names, when that row names it back. */
  retraction: RetractionContent | null;
  /** The fact its superseded_by_id names, as stored. */
  supersededBy: {
    id: string;
    slot: string;
    key: string | null;
    supersedesId: string | null;
    status: FactStatus;
    promotedBy: string | null;
    /** What backed it, when it went live with no decision of its own (`supersederBacked`). */
    origin: string;
    tool: string | null;
    recordedAt: Date;
    restoredFrom: string | null;
    text: string;
    /** The tools on its cited turn's receipt (null: none ran, or no such turn). */
    receiptTools: readonly string[] | null;
    /** A probe-settled overturn names it as the restoration of `restoredFrom`. */
    restorationSettled: boolean;
  } | null;
}

/** One stored-as-live fact that nothing the owner signed backs. */
export interface WithheldFact {
  fact: Fact;
  code: ChainBreakCode;
  reason: string;
}

/** A fact the chain keeps live that left live memory with no decision, ledger row or expiry. */
export interface UnexplainedFact {
  id: FactId;
  status: FactStatus;
  code: ChainBreakCode;
  reason: string;
  /**
   * The unsigned ledger row that took it out of the store's live rows: the owner can sign it
   * (`owner.retract`), so it does not stop the owner's decisions as other departures do.
   */
  retraction?: string;
}

/** Which stored-as-live facts are backed, which expired, and which are withheld, and why. */
export interface TrustJudgement {
  live: Fact[];
  expired: Fact[];
  withheld: WithheldFact[];
  unexplained: UnexplainedFact[];
  /** Live facts the owner approved that ledger rows name, unsigned: shown, marked disputed. */
  disputed: DisputedFact[];
  /** Ledger rows naming a fact the owner approved, unsigned: no claim of theirs is shown as settled. */
  unsignedRetractions: string[];
}

/** A live fact an unsigned ledger row disputes (an agent's retraction awaiting the owner). */
export interface DisputedFact {
  factId: string;
  retractions: string[];
}

const sameContent = (a: Fact, b: Fact): boolean =>
  a.slot === b.slot &&
  a.key === b.key &&
  a.text === b.text &&
  a.origin === b.origin &&
  a.attested === b.attested &&
  (a.attestation?.verdict ?? null) === (b.attestation?.verdict ?? null) &&
  (a.attestation?.reason ?? null) === (b.attestation?.reason ?? null) &&
  a.evidence.turnId === b.evidence.turnId &&
  a.evidence.seq === b.evidence.seq &&
  a.evidence.quote === b.evidence.quote &&
  a.evidence.tool === b.evidence.tool &&
  JSON.stringify(a.evidence.citations ?? null) === JSON.stringify(b.evidence.citations ?? null) &&
  (a.validFrom?.getTime() ?? null) === (b.validFrom?.getTime() ?? null) &&
  (a.validTo?.getTime() ?? null) === (b.validTo?.getTime() ?? null);

type Verdict = { ok: true } | { ok: false; code: ChainBreakCode; reason: string };

const no = (code: ChainBreakCode, reason: string): Verdict => ({ ok: false, code, reason });

/** Whether the owner's chain backs one approved fact as it is stored now. */
function approvedVerdict(state: ChainState, f: Fact, crypto: ChainCrypto, hash?: string): Verdict {
  const entry = state.approved.get(f.id);
  if (entry === undefined) return no('MISSING_DECISION', 'no verified approval');
  if ((hash ?? factContentHash(f, crypto)) !== entry.contentHash) {
    return no('CONTENT_CHANGED', `its content changed after it was approved at link ${entry.seq}`);
  }
  const replaced = replacedBy(state, f.id);
  return replaced ?? { ok: true };
}

/** A fact a later approval replaced (a newer value for its slot and key, or a correction). */
function replacedBy(state: ChainState, id: string): Verdict | null {
  const by = state.superseded.get(id);
  if (by === undefined) return null;
  return no(
    'STATUS_MISMATCH',
    `link ${by} approved a newer value for it (its slot and key, or the owner's correction)`,
  );
}

/** A delegation's bound in words, for a reason: at most 120 characters, as "Emailed {}". */
export function boundWords(bound: DelegationBound | null): string {
  if (bound === null) return 'no bound';
  return `at most ${bound.maxChars} characters${bound.template === null ? '' : `, as "${bound.template}"`}`;
}

/** Whether something the owner signed backs a fact the store shows as live. */
export function judgeActive(
  state: ChainState,
  e: ActiveFactEvidence,
  crypto: ChainCrypto,
): Verdict {
  const f = e.fact;
  // the chain says which facts the owner took down, whatever the ledger's rows say now
  const retracted = state.retractedFacts.get(f.id);
  if (retracted !== undefined) {
    return no(
      'STATUS_MISMATCH',
      `the owner retracted it at link ${retracted.seq} (retraction ${retracted.retractionId})`,
    );
  }
  // a ledger row alone takes down only what no owner approval put up (an action on its receipt,
  // a restoration); a fact the owner approved stays live, disputed, until the owner signs
  if (e.retractions.length > 0 && state.approved.get(f.id) === undefined) {
    return no('UNEXPLAINED_STATUS', 'a ledger row retracted it');
  }
  const decided = state.decided.get(f.id);
  if (decided !== undefined) {
    if (decided.decision === 'reject')
      return no('STATUS_MISMATCH', `the owner rejected it at link ${decided.seq}`);
    return approvedVerdict(state, f, crypto, e.contentHash);
  }
  const beyond =
    state.broken === null ? '' : ` (the chain is verified only up to link ${state.tip.seq})`;
  // a fact that went live with no decision of its own is still replaced by a later approval
  if (e.promotedBy === 'receipt' || e.promotedBy === 'restoration') {
    const replaced = replacedBy(state, f.id);
    if (replaced !== null) return replaced;
  }
  if (f.key !== null && (e.promotedBy === 'receipt' || e.promotedBy === 'restoration')) {
    const later = state.lastApproval(f.slot, f.key);
    if (
      later !== undefined &&
      later.id !== f.id &&
      later.decidedAt.getTime() > f.recordedAt.getTime()
    ) {
      return no('STATUS_MISMATCH', `link ${later.seq} approved a newer value for its slot and key`);
    }
  }
  if (e.promotedBy === 'receipt') {
    const d = state.delegationAt(f.slot, f.recordedAt);
    if (d === undefined || !d.autoLive) {
      return no(
        'UNSIGNED_DELEGATION',
        `slot "${f.slot}" has no signed auto-live delegation${beyond}`,
      );
    }
    if (!delegationMatches(f.subjectId, f.slot, d, crypto)) {
      return no('DELEGATION_CHANGED', `the delegation of slot "${f.slot}" does not match its link`);
    }
    const tool = f.evidence.tool;
    if (f.origin !== 'did' || tool === null || !d.tools.includes(tool)) {
      return no(
        'UNSIGNED_DELEGATION',
        `the delegation of slot "${f.slot}" does not allow its tool`,
      );
    }
    if (e.receiptTools === null || !e.receiptTools.includes(tool)) {
      return no('MISSING_DECISION', `the cited turn's receipt does not show ${tool} ran`);
    }
    if (!textWithinBound(f.text, d.bound)) {
      return no(
        'UNSIGNED_DELEGATION',
        `its text is beyond what the delegation of slot "${f.slot}" lets it say (${boundWords(d.bound)})`,
      );
    }
    return { ok: true };
  }
  if (e.promotedBy === 'restoration' && e.restoration !== null) {
    const original = e.restoration.original;
    if (!e.restoration.settled || original === null || !sameContent(original, f)) {
      return no('MISSING_DECISION', 'no probe-settled overturn restores it');
    }
    // a restoration brings back a retracted fact, which stays retracted
    if (original.status !== 'retracted') {
      return no('UNEXPLAINED_STATUS', `the fact it restores is ${original.status}, not retracted`);
    }
    if (state.decided.get(original.id)?.decision === 'reject') {
      return no('STATUS_MISMATCH', 'the fact it restores was rejected by the owner');
    }
    // the original went live on an approval, or on a receipt under the delegation of its time
    const d = state.delegationAt(original.slot, original.recordedAt);
    if (
      !state.approved.has(original.id) &&
      d !== undefined &&
      delegationMatches(original.subjectId, original.slot, d, crypto) &&
      original.origin === 'did' &&
      original.evidence.tool !== null &&
      d !== undefined &&
      d.autoLive &&
      d.tools.includes(original.evidence.tool)
    ) {
      return { ok: true };
    }
    const backed = approvedVerdict(state, original, crypto);
    return backed.ok
      ? backed
      : no(backed.code, `the fact it restores is not backed: ${backed.reason}`);
  }
  return no(
    'MISSING_DECISION',
    `no verified decision, delegation or restoration backs it${beyond}`,
  );
}

/**
 * Why a fact the chain keeps live is no longer live in the store, or null when that is explained.
 * `backed`: whether its superseder went live on something the owner signed (an approval, or a
 * receipt or restoration `wasBacked` accepts); a superseder nothing backed never was live.
 */
export function judgeDeparted(
  d: DepartedFactEvidence,
  now: Date,
  liveIds: ReadonlySet<string>,
  backed: (by: NonNullable<DepartedFactEvidence['supersededBy']>) => boolean = () => false,
  retracted: (r: RetractionContent) => boolean = () => true,
): UnexplainedFact | null {
  if (d.status === 'retracted' && d.retraction !== null && retracted(d.retraction)) return null;
  if (d.status === 'expired' && d.validTo !== null && d.validTo.getTime() <= now.getTime())
    return null;
  // replaced for its slot and key by another fact: that fact must name it back, and be live
  // itself, or have gone live on an approval, a receipt or a restoration and left since (its
  // own departure is checked in its own turn)
  const by = d.supersededBy;
  if (
    d.status === 'superseded' &&
    by !== null &&
    by.id !== d.id &&
    d.key !== null &&
    by.slot === d.slot &&
    by.key === d.key &&
    by.supersedesId === d.id &&
    (liveIds.has(by.id) ||
      (['superseded', 'retracted', 'expired'].includes(by.status) && backed(by)))
  ) {
    return null;
  }
  return {
    id: d.id as FactId,
    status: d.status,
    code: 'UNEXPLAINED_STATUS',
    reason: `the owner approved it, but it is ${d.status} with no decision, ledger row or expiry that explains it`,
  };
}

/**
 * Where the trusted chain ends before the owner's: links past the verified prefix that are stored
 * but fail (a broken chain), or were recorded outside the store and are gone (a cut head). What
 * those links decided is unknown, so a fact they could have taken down is not shown as it was.
 */
export interface PrefixEnd {
  code: ChainBreakCode;
  /** The links the chain is trusted up to. */
  verified: number;
}

/**
 * Why a fact the verified prefix backs may not stand past its end, or null when no later link
 * could change it: a later approval for its slot and key would have replaced a keyed fact, and a
 * later delegation link could have revoked the slot a receipt fact recorded since went live in.
 */
export function beyondPrefix(e: ActiveFactEvidence, state: ChainState, end: PrefixEnd): Verdict {
  const f = e.fact;
  const past = `a decision after link ${end.verified}, which the chain no longer proves`;
  if (f.key !== null) {
    return no(
      end.code,
      `${past}, may have replaced its value for slot "${f.slot}", key "${f.key}"`,
    );
  }
  const tipAt = state.tipDecidedAt?.getTime() ?? -Infinity;
  if (e.promotedBy === 'receipt' && f.recordedAt.getTime() > tipAt) {
    return no(end.code, `${past}, may have revoked the delegation of slot "${f.slot}"`);
  }
  return { ok: true };
}

/**
 * Whether a fact that replaced an approved one went live on something the owner signed, as
 * `judgeActive` would have judged it then: an approval; a receipt under the delegation of its
 * time, for a tool its cited turn's receipt names, within the delegation's bound; or a
 * restoration a probe-settled overturn names, of a fact the chain backs.
 */
function supersederBacked(
  state: ChainState,
  by: NonNullable<DepartedFactEvidence['supersededBy']>,
  crypto: ChainCrypto,
): boolean {
  if (state.approved.has(by.id)) return true;
  if (by.promotedBy === 'receipt') {
    const d = state.delegationAt(by.slot, by.recordedAt);
    return (
      wasBacked(state, { ...by, promotedBy: 'receipt' }, state.subjectId, crypto) &&
      by.tool !== null &&
      (by.receiptTools ?? []).includes(by.tool) &&
      d !== undefined &&
      textWithinBound(by.text, d.bound)
    );
  }
  if (by.promotedBy === 'restoration') {
    return (
      by.restorationSettled &&
      wasBacked(state, { ...by, promotedBy: 'restoration' }, state.subjectId, crypto)
    );
  }
  return false;
}

/**
 * Sorts the stored-as-live facts into live, expired and withheld. `end`: where the trusted chain
 * stops short of the owner's (a break or a cut head); facts whose standing rests on the missing
 * links are withheld (`beyondPrefix`).
 */
export function judgeFacts(
  state: ChainState,
  active: readonly ActiveFactEvidence[],
  departed: readonly DepartedFactEvidence[],
  now: Date,
  crypto: ChainCrypto,
  end: PrefixEnd | null = state.broken === null
    ? null
    : { code: state.broken.code, verified: state.length },
): TrustJudgement {
  const out: TrustJudgement = {
    live: [],
    expired: [],
    withheld: [],
    unexplained: [],
    disputed: [],
    unsignedRetractions: [],
  };
  for (const e of active) {
    let v = judgeActive(state, e, crypto);
    if (v.ok && end !== null) v = beyondPrefix(e, state, end);
    if (!v.ok) out.withheld.push({ fact: e.fact, code: v.code, reason: v.reason });
    else if (isExpired(e.fact, now)) out.expired.push(e.fact);
    else out.live.push(e.fact);
  }
  const liveIds = new Set(out.live.map((f) => f.id));
  for (const e of active) {
    if (!liveIds.has(e.fact.id)) continue;
    // a live fact a ledger row names, unsigned: disputed, and shown as such
    const open = e.retractions.filter((r) => !retractionSigned(state, r, crypto));
    if (open.length > 0)
      out.disputed.push({ factId: e.fact.id, retractions: open.map((r) => r.id) });
  }
  for (const d of departed) {
    // replaced on a verified link (a newer value for its slot and key, or the owner's
    // correction naming it): out of live memory on the chain's word, whatever went live before
    if (d.status === 'superseded' && state.superseded.has(d.id)) continue;
    // a fact the owner approved leaves on the owner's signed retraction; any other on its row
    const u = judgeDeparted(
      d,
      now,
      liveIds,
      (by) => supersederBacked(state, by, crypto),
      () =>
        !state.approved.has(d.id) ||
        state.retractedFacts.get(d.id)?.retractionId === d.retraction?.id,
    );
    // an approved fact's row the owner did not sign as it stands: its words settle nothing
    if (
      d.retraction !== null &&
      state.approved.has(d.id) &&
      !retractionSigned(state, d.retraction, crypto) &&
      u === null
    ) {
      out.unsignedRetractions.push(d.retraction.id);
    }
    if (u !== null) {
      const r = d.status === 'retracted' ? d.retraction : null;
      out.unexplained.push(
        r === null
          ? u
          : {
              ...u,
              reason: `the owner approved it, and ledger row ${shownId(r.id)} retracted it with no signature of the owner's (sign it: memledger retract sign ${shownId(r.id)})`,
              retraction: r.id,
            },
      );
      if (r !== null) out.unsignedRetractions.push(r.id);
    }
  }
  for (const x of out.disputed) out.unsignedRetractions.push(...x.retractions);
  return out;
}

/** Whether the owner signed this ledger row as it stands (a `retract` link with its hash). */
export function retractionSigned(
  state: ChainState,
  r: RetractionContent,
  crypto: Pick<ChainCrypto, 'sha256Hex'>,
): boolean {
  const link = state.retractions.get(r.id);
  return link !== undefined && link.contentHash === crypto.sha256Hex(retractionPayload(r));
}

/** A fact whose world time has ended is expired, not live. */
export const isExpired = (f: Pick<Fact, 'validTo'>, now: Date): boolean =>
  f.validTo !== null && f.validTo.getTime() <= now.getTime();

/** A chain head recorded somewhere the store's tables cannot rewrite it, and what became of it. */
export interface HeadCut {
  /** Who recorded the head: this process, an arrival manifest, or the owner's head file. */
  source: 'process' | 'arrival' | 'owner';
  expected: { seq: number; hash: string };
  /** The store's chain length now. */
  found: number;
  reason: string;
}

/** What the engine may show a model of one subject's memory, and every reason it withheld. */
export interface TrustView {
  subjectId: string;
  chain: {
    /** Links verified (the trusted prefix) and links stored. */
    verified: number;
    stored: number;
    headHash: string;
    broken: ChainBreak | null;
    headCut: HeadCut | null;
    /** What the owner's key was checked against: the anchor's source; null when none. */
    anchor: string | null;
    /**
     * The store holds an owner key and the process reading holds no anchor: it trusted the
     * store's own copy of the key, and says so (UNANCHORED_LINE).
     */
    unanchored: boolean;
  };
  live: Fact[];
  expired: Fact[];
  withheld: WithheldFact[];
  unexplained: UnexplainedFact[];
  /** Slots whose stored auto-live setting no verified delegation accounts for. */
  delegations: DelegationProblem[];
  /** Live facts disputed by a retraction the owner has not signed (`TrustJudgement`). */
  disputed: DisputedFact[];
  /** Ledger rows naming an approved fact, unsigned: their claims are not shown as settled. */
  unsignedRetractions: string[];
}

/**
 * `view`, frozen with its facts: a view is shared by every read that gets it (kept by the
 * verifier, or sent by the store's host), and none of them may change what it says.
 */
export function frozenView(view: TrustView): TrustView {
  for (const f of [...view.live, ...view.expired, ...view.withheld.map((w) => w.fact)]) {
    Object.freeze(f.evidence);
    Object.freeze(f);
  }
  Object.freeze(view.chain);
  for (const d of view.disputed) Object.freeze(d.retractions);
  for (const list of [
    view.live,
    view.expired,
    view.withheld,
    view.unexplained,
    view.delegations,
    view.disputed,
    view.unsignedRetractions,
  ]) {
    Object.freeze(list);
  }
  return Object.freeze(view);
}

/** A view's facts by id (made once per view: a kept view is read by many reads). */
export interface TrustViewIndex {
  live: ReadonlyMap<string, Fact>;
  expired: ReadonlyMap<string, Fact>;
  withheld: ReadonlyMap<string, WithheldFact>;
}

const indexes = new WeakMap<TrustView, TrustViewIndex>();

/** The facts of a view by id. */
export function viewIndex(v: TrustView): TrustViewIndex {
  let i = indexes.get(v);
  if (i === undefined) {
    i = {
      live: new Map(v.live.map((f) => [f.id, f])),
      expired: new Map(v.expired.map((f) => [f.id, f])),
      withheld: new Map(v.withheld.map((w) => [w.fact.id, w])),
    };
    indexes.set(v, i);
  }
  return i;
}

/**
 * The line that says a read was not anchored: the process holds no owner key from outside the
 * store, so a store whose key was replaced (and everything re-signed) would look the same.
 */
export const UNANCHORED_LINE =
  "This memory was checked against the owner key stored with it, not against the owner's key file: " +
  'a process that replaced that key could go unnoticed. The owner should anchor it (their key file, or a pinned key id).';

/** Whether anything failed verification. */
export const hasIntegrityProblem = (v: TrustView): boolean =>
  v.chain.broken !== null ||
  v.chain.headCut !== null ||
  v.withheld.length > 0 ||
  v.unexplained.length > 0 ||
  v.delegations.length > 0;

/**
 * The server's snapshot as one statement saw it (pg_current_snapshot), the server's run it was
 * taken on, and whether the server is a standby in recovery (whose snapshots do not list the
 * transactions in progress).
 */
export interface ServerSnapshot {
  snapshot: string;
  started: string;
  recovery: boolean;
}

/**
 * The integrity block's lines: one per problem, then, when the read held no anchor, the line that
 * says so (UNANCHORED_LINE). Empty when the view is clean and anchored.
 */
export function integrityLines(v: TrustView, limit = 20): string[] {
  const lines: string[] = [];
  const b = v.chain.broken;
  if (b !== null) {
    lines.push(
      `The decision chain is broken at link ${b.brokenAt} (${b.code}): ${b.reason}. Only links before it are trusted.`,
    );
  }
  const cut = v.chain.headCut;
  if (cut !== null) lines.push(`The decision chain was cut (HEAD_CUT): ${cut.reason}.`);
  const items = [
    ...v.withheld.map((w) => `withheld ${w.fact.id} (${w.code}): ${w.reason}`),
    ...v.unexplained.map((u) => `missing ${u.id} (${u.code}): ${u.reason}`),
    ...v.delegations.map((d) => `slot ${d.slot} (${d.code}): ${d.reason}`),
  ];
  for (const item of items.slice(0, limit)) lines.push(`- ${item}`);
  if (items.length > limit) lines.push(`- …and ${items.length - limit} more`);
  if (v.chain.unanchored) lines.push(UNANCHORED_LINE);
  return lines.map(shownSafely);
}

/**
 * A line that quotes store-controlled strings (ids, slots, tools, key ids), made safe to put in
 * front of a model: one line, no control characters, no brackets that could open a block or a
 * receipt, and bounded.
 */
export function shownSafely(line: string): string {
  const flat = oneLine(line).replace(/\[/g, '(').replace(/\]/g, ')');
  return flat.length > 400 ? `${flat.slice(0, 399)}…` : flat;
}

/**
 * Whether a fact that went live with no decision of its own was backed when it did: a did fact
 * under the delegation of its time, or a restoration of an approved fact. Only such a fact's
 * departure needs explaining; an unbacked one never was live memory.
 */
export function wasBacked(
  state: ChainState,
  f: {
    slot: string;
    promotedBy: string;
    origin: string;
    tool: string | null;
    recordedAt: Date;
    restoredFrom: string | null;
  },
  subjectId: string,
  crypto: Pick<ChainCrypto, 'sha256Hex'>,
): boolean {
  if (f.promotedBy === 'restoration') {
    return f.restoredFrom !== null && state.approved.has(f.restoredFrom);
  }
  const d = state.delegationAt(f.slot, f.recordedAt);
  return (
    f.origin === 'did' &&
    f.tool !== null &&
    d !== undefined &&
    d.autoLive &&
    d.tools.includes(f.tool) &&
    delegationMatches(subjectId, f.slot, d, crypto)
  );
}
