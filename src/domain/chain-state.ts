import {
  BAD_SIGNATURE,
  checkLink,
  correctedFact,
  retractionNoteFact,
  decidesProposal,
  linkSigned,
  type DelegationBound,
  GENESIS_TIP,
  proposalContentHash,
  type ChainBreakCode,
  type ChainCrypto,
  type ChainTip,
  type DecisionLink,
  type VerifyChainOptions,
} from './decision-chain.js';
import type { Fact } from './fact.js';
import { parseForgetNote } from './forget.js';
import { parseForgetPolicyNote, type ForgetPolicy } from './forget-policy.js';

/**
 * The verified prefix of a subject's decision chain, as reads use it (ChainState): what each link
 * decided, approved, superseded, retracted, forgot, delegated, revoked and the forget policy, and
 * the hash an approval records of a fact. Pure: src/domain/trust.ts judges facts by it.
 */

/** Where the chain stops being trustworthy, and why. */
export interface ChainBreak {
  brokenAt: number;
  code: ChainBreakCode;
  reason: string;
}

interface ApprovedEntry {
  seq: number;
  contentHash: string;
  slot: string;
  key: string | null;
}

/** A slot's delegation, as its last verified link signed it. */
export interface DelegationEntry {
  seq: number;
  autoLive: boolean;
  tools: readonly string[];
  /** What its facts may say; null for a delegation signed before bounds existed (no bound). */
  bound: DelegationBound | null;
  decidedAt: Date;
  contentHash: string;
}

/**
 * What the verified prefix of a subject's chain says: the last decision on every proposal, the
 * approved facts the chain keeps live (a later approval for the same slot and key supersedes an
 * earlier one), and the slot delegations. Extended link by link: verified links are never
 * verified again.
 */
export class ChainState {
  tip: ChainTip = GENESIS_TIP;
  /** When the tip was decided (null before link 1). */
  tipDecidedAt: Date | null = null;
  /** The hash of link 1, once verified. */
  rootHash: string | null = null;
  /** Every verified link's hash, by seq - 1 (to check a head recorded outside the store). */
  readonly hashes: string[] = [];
  broken: ChainBreak | null = null;
  readonly decided = new Map<string, { seq: number; decision: 'approve' | 'reject' }>();
  readonly approved = new Map<string, ApprovedEntry>();
  /**
   * Facts a later approval replaced (a value for the same slot and key, or the owner's correction
   * naming them), with that link's seq.
   */
  readonly superseded = new Map<string, number>();
  /** The tokens the owner revoked, with the link that did. */
  readonly revokedTokens = new Map<string, number>();
  /** The ledger rows the owner signed (`retract` links), by id: the link and its content hash. */
  readonly retractions = new Map<string, { seq: number; contentHash: string }>();
  /** The facts those links took down (named in their signed notes), with the link and row. */
  readonly retractedFacts = new Map<string, { seq: number; retractionId: string }>();
  /** The facts a forget named, with its link: gone from the store on the owner's word. */
  readonly forgottenFacts = new Map<string, number>();
  /** The ledger rows a forget named, likewise. */
  readonly forgottenRetractions = new Map<string, number>();
  /** The forget policy in effect (the last `policy` link's), with that link's seq; null: none. */
  forgetPolicy: (ForgetPolicy & { seq: number }) | null = null;
  /** Each slot's current delegation (its last delegation link). */
  readonly delegations = new Map<string, DelegationEntry>();
  /** Every delegation link of each slot, oldest first. */
  private readonly delegationLinks = new Map<string, DelegationEntry[]>();
  private readonly liveByKey = new Map<string, string>();
  /** The last verified approval for each slot and key, and when it was decided. */
  private readonly keyApprovals = new Map<string, { id: string; seq: number; decidedAt: Date }>();
  /** The seq that decided each proposal (a proposal is decided once). */
  readonly decidedSeqs = new Map<string, number>();

  constructor(
    readonly subjectId: string,
    private readonly opts: Omit<VerifyChainOptions, 'currentContentHash'>,
  ) {}

  get length(): number {
    return this.tip.seq;
  }

  /** The owner public key the chain is verified under (the subject's, as the store gave it). */
  get publicKeyPem(): string {
    return this.opts.publicKeyPem;
  }

  /**
   * The delegation of a slot in effect at `at`: a fact that went live on a receipt under it stays
   * backed when the slot is revoked or re-delegated later.
   */
  delegationAt(slot: string, at: Date): DelegationEntry | undefined {
    const all = this.delegationLinks.get(slot) ?? [];
    let found: DelegationEntry | undefined;
    for (const d of all) if (d.decidedAt.getTime() <= at.getTime()) found = d;
    return found;
  }

  /** The last verified approval for a slot and key, if any. */
  lastApproval(
    slot: string,
    key: string,
  ): { id: string; seq: number; decidedAt: Date } | undefined {
    return this.keyApprovals.get(`${slot}\u0000${key}`);
  }

  /** The approved facts the chain keeps live (not superseded by a later approval, not forgotten). */
  chainLive(): string[] {
    return [...this.approved.keys()].filter((id) => !this.superseded.has(id));
  }

  /**
   * Verifies and applies links that follow the tip, in order, until one fails (then `broken`
   * names it and nothing after it is applied). `factOf` gives the decided proposal as stored
   * now: a decided proposal whose content no longer hashes to what was signed breaks the chain.
   *
   * Every link's sequence, hash, key and content is checked, but not every signature. A link's
   * signature covers the hash of the link before it, and so, hash by hash, every link under it.
   * A format-2 link is sealed only on a chain that passed this check under the signer's own key
   * (OwnerDecisions.ready), so its verified signature means the owner's key accepted the whole
   * chain under it: the last format-2 link's signature is checked, and 10,000 links cost one
   * Ed25519 check, not 10,000. The links above it (format 1, stored before the rule), and every
   * link when that signature fails, have their own signatures checked in order, and the chain
   * breaks at the first that fails, as before. What this leaves unread: a damaged signature on a
   * link whose content a later format-2 signature covers (`memledger chain verify` checks
   * every signature and reports it). See docs/TRUST.md ("What one signature covers").
   */
  extend(
    links: readonly DecisionLink[],
    factOf: (proposalId: string) => Fact | null,
    crypto: ChainCrypto,
  ): void {
    if (this.broken !== null) return;
    const opts = (fact: Fact | null): VerifyChainOptions => ({
      ...this.opts,
      currentContentHash: () => (fact === null ? null : factContentHash(fact, crypto)),
    });
    // every check but the signatures, link by link
    const decidedHere = new Map<string, number>();
    const decided = {
      get: (id: string) => decidedHere.get(id) ?? this.decidedSeqs.get(id),
    };
    // a decided proposal the store no longer holds is gone on the owner's word when a later
    // forget link names it: its link is checked as signed, and stands only if that link does
    const forgottenBy = new Map<string, number>();
    links.forEach((link, i) => {
      if (link.decision !== 'forget') return;
      const t = parseForgetNote(link.note, link.contentHash, (x) => crypto.sha256Hex(x));
      for (const id of t?.facts ?? []) if (!forgottenBy.has(id)) forgottenBy.set(id, i);
    });
    const restsOn: Array<{ at: number; forget: number }> = [];
    const shaped: Array<{ link: DecisionLink; fact: Fact | null }> = [];
    let tip = this.tip;
    let broken: ChainBreak | null = null;
    for (const [i, link] of links.entries()) {
      const fact = decidesProposal(link) ? factOf(link.proposalId) : null;
      const forget = fact === null ? forgottenBy.get(link.proposalId) : undefined;
      const o: VerifyChainOptions =
        forget !== undefined && forget > i && decidesProposal(link)
          ? { ...this.opts, currentContentHash: () => link.contentHash }
          : opts(fact);
      const check = checkLink(link, tip, o, decided, 'covered');
      if (check !== null) {
        // reported as a link-by-link check reports it (a bad signature before some faults)
        const first = checkLink(link, tip, o, decided) ?? check;
        broken = { brokenAt: Number.isSafeInteger(link.seq) ? link.seq : tip.seq + 1, ...first };
        break;
      }
      if (decidesProposal(link)) decidedHere.set(link.proposalId, link.seq);
      if (o.currentContentHash !== undefined && forget !== undefined && forget > i) {
        restsOn.push({ at: i, forget });
      }
      shaped.push({ link, fact });
      tip = { seq: link.seq, hash: link.hash };
    }
    // the last format-2 link's signature covers it and the links under it; the links above it,
    // or all of them when it fails, have their own signatures checked, in order
    let from = 0;
    for (let i = shaped.length - 1; i >= 0; i--) {
      const s = shaped[i] as (typeof shaped)[number];
      if (s.link.format !== 2) continue;
      if (linkSigned(s.link, this.opts)) from = i + 1;
      break;
    }
    let signed = shaped.length;
    for (let i = from; i < shaped.length; i++) {
      const s = shaped[i] as (typeof shaped)[number];
      if (linkSigned(s.link, this.opts)) continue;
      signed = i;
      broken = { brokenAt: s.link.seq, ...BAD_SIGNATURE };
      break;
    }
    // a link that rested on a forget the chain does not reach breaks where it stands
    for (;;) {
      const r = restsOn.find((x) => x.at < signed && x.forget >= signed);
      if (r === undefined) break;
      const link = (shaped[r.at] as (typeof shaped)[number]).link;
      signed = r.at;
      broken = {
        brokenAt: link.seq,
        code: 'CONTENT_CHANGED',
        reason: `proposal ${link.proposalId} is missing`,
      };
    }
    for (const { link, fact } of shaped.slice(0, signed)) {
      this.apply(link, fact);
      if (link.seq === 1) this.rootHash = link.hash;
      this.tip = { seq: link.seq, hash: link.hash };
      this.tipDecidedAt = new Date(link.decidedAt);
      this.hashes.push(link.hash);
    }
    this.broken = broken;
  }

  private apply(link: DecisionLink, fact: Fact | null): void {
    if (link.decision === 'forget') {
      this.applyForget(link);
      return;
    }
    if (link.decision === 'retract') {
      const retractionId = link.proposalId.slice('retraction:'.length);
      this.retractions.set(retractionId, { seq: link.seq, contentHash: link.contentHash });
      const factId = retractionNoteFact(link.note);
      if (factId !== null) this.retractedFacts.set(factId, { seq: link.seq, retractionId });
      return;
    }
    if (link.decision === 'policy') {
      const policy = parseForgetPolicyNote(link.note, link.contentHash, (x) =>
        this.opts.crypto.sha256Hex(x),
      );
      this.forgetPolicy = { ...policy, seq: link.seq };
      return;
    }
    if (link.decision === 'revoke') {
      this.revokedTokens.set(link.proposalId.slice('token:'.length), link.seq);
      return;
    }
    if (link.decision === 'delegate') {
      const slot = link.proposalId.slice('slot:'.length);
      const entry: DelegationEntry = {
        seq: link.seq,
        ...parseDelegationNote(link),
        decidedAt: new Date(link.decidedAt),
        contentHash: link.contentHash,
      };
      this.delegations.set(slot, entry);
      const all = this.delegationLinks.get(slot) ?? [];
      all.push(entry);
      this.delegationLinks.set(slot, all);
      return;
    }
    this.decidedSeqs.set(link.proposalId, link.seq);
    this.decided.set(link.proposalId, { seq: link.seq, decision: link.decision });
    if (link.decision !== 'approve') return;
    // the owner's correction replaces the fact it names, keyed or not (the note is signed: it
    // holds even when the approved fact's row is gone)
    const corrected = correctedFact(link.note);
    if (corrected !== null && corrected !== link.proposalId) {
      this.superseded.set(corrected, link.seq);
    }
    if (fact === null) return;
    this.approved.set(fact.id, {
      seq: link.seq,
      contentHash: link.contentHash,
      slot: fact.slot,
      key: fact.key,
    });
    if (fact.key !== null) {
      const k = `${fact.slot}\u0000${fact.key}`;
      const before = this.liveByKey.get(k);
      if (before !== undefined && before !== fact.id) this.superseded.set(before, link.seq);
      this.liveByKey.set(k, fact.id);
      this.keyApprovals.set(k, { id: fact.id, seq: link.seq, decidedAt: new Date(link.decidedAt) });
    }
  }

  /** A forget link: the facts and ledger rows its note names are gone on the owner's word. */
  private applyForget(link: DecisionLink): void {
    const targets = parseForgetNote(link.note, link.contentHash, (x) =>
      this.opts.crypto.sha256Hex(x),
    );
    if (targets === null) return;
    const gone = new Set(targets.facts);
    for (const factId of gone) {
      this.forgottenFacts.set(factId, link.seq);
      this.approved.delete(factId);
      this.superseded.delete(factId);
    }
    for (const [k, v] of this.liveByKey) if (gone.has(v)) this.liveByKey.delete(k);
    for (const [k, v] of this.keyApprovals) if (gone.has(v.id)) this.keyApprovals.delete(k);
    for (const r of targets.retractions) this.forgottenRetractions.set(r, link.seq);
  }
}

/**
 * A delegation link's note carries what it signed, as JSON (the content hash binds it): the
 * slot's auto-live flag and tools. An unreadable note delegates nothing.
 */
function parseDelegationNote(link: DecisionLink): {
  autoLive: boolean;
  tools: readonly string[];
  bound: DelegationBound | null;
} {
  try {
    const parsed = JSON.parse(link.note) as {
      autoLive?: unknown;
      tools?: unknown;
      bound?: { maxChars?: unknown; template?: unknown } | null;
    };
    const tools = Array.isArray(parsed.tools)
      ? parsed.tools.filter((t): t is string => typeof t === 'string')
      : [];
    const b = parsed.bound;
    const bound =
      typeof b === 'object' && b !== null && Number.isSafeInteger(b.maxChars)
        ? {
            maxChars: b.maxChars as number,
            template: typeof b.template === 'string' ? b.template : null,
          }
        : null;
    return { autoLive: parsed.autoLive === true, tools, bound };
  } catch {
    return { autoLive: false, tools: [], bound: null };
  }
}

/** The hash an approval records of the fact it approved. */
export function factContentHash(f: Fact, crypto: Pick<ChainCrypto, 'sha256Hex'>): string {
  return proposalContentHash(
    {
      id: f.id,
      subjectId: f.subjectId,
      slot: f.slot,
      key: f.key,
      text: f.text,
      origin: f.origin,
      evidence: {
        turnId: f.evidence.turnId,
        seq: f.evidence.seq,
        quote: f.evidence.quote,
        tool: f.evidence.tool,
        citations: f.evidence.citations ?? null,
      },
      attested: f.attested,
      attestation: f.attestation ?? null,
      validFrom: f.validFrom?.toISOString() ?? null,
      validTo: f.validTo?.toISOString() ?? null,
    },
    crypto,
  );
}
