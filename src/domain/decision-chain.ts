import { canonicalEncode } from './canonical.js';
import { EngineError } from './errors.js';

/**
 * Owner decisions form one hash chain per subject. Each link hashes the canonical encoding of its
 * fields (which include the previous link's hash) and is signed with the owner's Ed25519 key, so
 * a process without the owner's private key can neither edit nor append a link that verifies.
 * Hashing and signature checking are injected: this module stays pure.
 */
export const DECISIONS = ['approve', 'reject'] as const;
/** One of `DECISIONS`. */
export type Decision = (typeof DECISIONS)[number];

/**
 * What a link can record: a decision on a proposal, a slot delegation (which tools' receipts may
 * make a did fact live in an action slot with no decision of its own), a token's revocation, a
 * signed retraction, a forget, or the forget policy (src/domain/forget-policy.ts).
 */
export const LINK_KINDS = [
  'approve',
  'reject',
  'delegate',
  'revoke',
  'retract',
  'forget',
  'policy',
] as const;
/** One of `LINK_KINDS`. */
export type LinkKind = (typeof LINK_KINDS)[number];

/** Whether a link decides a proposal (approve or reject), not a slot or a token. */
export const decidesProposal = (link: Pick<DecisionFields, 'decision'>): boolean =>
  link.decision === 'approve' || link.decision === 'reject';

/** The proposalId a delegation link names: its slot, prefixed so no proposal id can equal it. */
export const delegationTarget = (slot: string): string => `slot:${slot}`;

/** The proposalId a revocation link names: the token's id, prefixed likewise. */
export const revocationTarget = (tokenId: string): string => `token:${tokenId}`;

/** The proposalId a retraction link names: the ledger row's id, prefixed likewise. */
export const retractionTarget = (retractionId: string): string => `retraction:${retractionId}`;

/**
 * What an owner's retraction signs: the ledger row, by what it says, the fact it names, and its
 * falsifier (what would overturn it, and the probe that may settle it: the owner signs those too).
 */
export interface RetractionContent {
  id: string;
  subjectId: string;
  factId: string | null;
  claim: string;
  correctedClaim: string;
  whyWrong: string;
  stoodOn: string;
  procedure: string;
  passObservation: string;
  overturnCondition: string;
  /** The probe spec and its two verdicts as stored (JSON), or null. */
  probe: unknown;
}

/** What a retraction link's content hash covers (a changed word of the row fails it). */
export function retractionPayload(r: RetractionContent): string {
  return canonicalEncode({
    v: 1,
    kind: 'memledger.retraction',
    subjectId: r.subjectId,
    id: r.id,
    factId: r.factId,
    claim: r.claim,
    correctedClaim: r.correctedClaim,
    whyWrong: r.whyWrong,
    stoodOn: r.stoodOn,
    procedure: r.procedure,
    passObservation: r.passObservation,
    overturnCondition: r.overturnCondition,
    probe: r.probe === null || r.probe === undefined ? null : stableJson(r.probe),
  });
}

/** JSON with every object's keys sorted: a stored probe (jsonb) encodes one way, whatever its order. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** A retraction link's note: the fact it takes down, readable from the chain alone (signed). */
export const retractionNote = (factId: string): string => JSON.stringify({ fact: factId });

/** The fact a retraction link's note names; null when the note is not one. */
export function retractionNoteFact(note: string): string | null {
  try {
    const parsed = JSON.parse(note) as { fact?: unknown };
    return typeof parsed.fact === 'string' && parsed.fact !== '' ? parsed.fact : null;
  } catch {
    return null;
  }
}

/** The kind an approval's note carries when it corrects a live fact. */
const CORRECTION_KIND = 'memledger.correction';

/**
 * An approval's note when it corrects a live fact: the fact it replaces, and the owner's note.
 * Signed with the link, so the chain alone says the corrected fact is no longer live.
 */
export const correctionNote = (factId: string, note: string): string =>
  JSON.stringify({ kind: CORRECTION_KIND, v: 1, corrects: factId, note });

/** The fact an approval's note says it corrects; null when the note is not one. */
export function correctedFact(note: string): string | null {
  try {
    const parsed = JSON.parse(note) as { kind?: unknown; corrects?: unknown } | null;
    const id = parsed?.corrects;
    return parsed?.kind === CORRECTION_KIND && typeof id === 'string' && id !== '' ? id : null;
  } catch {
    return null;
  }
}

/** What a revocation link's content hash covers: the token, by id and by its secret's hash. */
export function tokenRevocationPayload(r: {
  subjectId: string;
  tokenId: string;
  tokenHash: string;
}): string {
  return canonicalEncode({
    v: 1,
    kind: 'memledger.token-revocation',
    subjectId: r.subjectId,
    tokenId: r.tokenId,
    tokenHash: r.tokenHash,
  });
}

/** The prevHash of the first link. */
export const GENESIS_HASH = '0'.repeat(64);

/** What a decision link signs and hashes. */
export interface DecisionFields {
  subjectId: string;
  seq: number;
  prevHash: string;
  proposalId: string;
  /**
   * sha256Hex(proposalContentPayload(proposal)) at the time of the decision; for a delegation,
   * sha256Hex(delegationPayload(delegation)).
   */
  contentHash: string;
  decision: LinkKind;
  /** ISO-8601 UTC, e.g. 2026-11-01T05:22:51.000Z. */
  decidedAt: string;
  note: string;
  keyId: string;
  /**
   * 2: sealed by a process that checked the chain under its own key before signing, so this
   * link's signature vouches for every link under it (`ChainState.extend`); 1: a link stored
   * before that rule, whose own signature is checked. Signed, as the payload's `v`.
   */
  format: LinkFormat;
}

/** A link's format (`DecisionFields.format`); new links are `LINK_FORMAT`. */
export type LinkFormat = 1 | 2;
export const LINK_FORMAT: LinkFormat = 2;

/** One link of a subject's owner-decision chain, as stored. */
export interface DecisionLink extends DecisionFields {
  /** sha256Hex(decisionPayload(fields)). */
  hash: string;
  /** Base64 Ed25519 signature over decisionPayload(fields). */
  signature: string;
}

/** The hashing and signature check the chain is verified with (node:crypto lives in crypto/). */
export interface ChainCrypto {
  sha256Hex(data: string): string;
  /** Must return false, never throw, on a malformed key or signature. */
  verify(publicKeyPem: string, data: string, signatureB64: string): boolean;
  /** The owner key id of an Ed25519 public key (PEM); null, never a throw, for anything else. */
  keyIdOf(publicKeyPem: string): string | null;
}

/** What the owner's signer must provide to seal a link (see src/crypto/owner-key.ts). */
export interface LinkSigner {
  keyId: string;
  sign(data: string): string;
}

/** What the owner approves or rejects: the proposal as it stood when decided. */
export interface ProposalContent {
  id: string;
  subjectId: string;
  slot: string;
  key: string | null;
  text: string;
  origin: string;
  evidence: {
    turnId: string | null;
    seq: number | null;
    quote: string | null;
    tool: string | null;
    /**
     * A summarized fact's cited turns. Encoded only when present, so every fact without them
     * hashes exactly as it did before summaries existed.
     */
    citations?: ReadonlyArray<{ turn: string; session: string; seq: number; at: string }> | null;
  };
  attested: boolean;
  /**
   * The gate's verdict on the quote and its reason (typed attestation). Encoded only when
   * present, so every fact stored before it, and every action and summary, hashes as before.
   */
  attestation?: { verdict: string; reason: string } | null;
  /** World time (ISO-8601); absent is encoded as null, so callers that omit them agree. */
  validFrom?: string | null;
  validTo?: string | null;
}

/** Why a chain failed verification, at its first bad link. */
export const CHAIN_BREAK_CODES = [
  'SEQ_GAP',
  'PREV_HASH_MISMATCH',
  'HASH_MISMATCH',
  'KEY_MISMATCH',
  'BAD_SIGNATURE',
  'CONTENT_CHANGED',
  'DUPLICATE_DECISION',
  'MISSING_DECISION',
  'STATUS_MISMATCH',
  'UNEXPLAINED_STATUS',
  'UNSIGNED_DELEGATION',
  'DELEGATION_CHANGED',
  'HEAD_CUT',
] as const;
/** One of `CHAIN_BREAK_CODES`. */
export type ChainBreakCode = (typeof CHAIN_BREAK_CODES)[number];

/** The outcome of verifying a chain: its length and head, or its first bad link and why. */
export type ChainReport =
  | {
      ok: true;
      length: number;
      headHash: string;
      /** The hash of link 1 (signed, so it names this chain); null for an empty chain. */
      rootHash?: string | null;
    }
  | {
      ok: false;
      length: number;
      /** The seq of the first bad link (its stored seq when that is an integer, else its position). */
      brokenAt: number;
      code: ChainBreakCode;
      reason: string;
    };

/** What `verifyChain` checks the links against. */
export interface VerifyChainOptions {
  crypto: ChainCrypto;
  /** The subject's owner public key, as stored. */
  publicKeyPem: string;
  keyId: string;
  /** Hash of the proposal as stored now; null when the proposal is missing. */
  currentContentHash?: (proposalId: string) => string | null;
}

/** The exact string that is hashed and signed for a link. Versioned, so the format can change. */
export function decisionPayload(f: DecisionFields): string {
  return canonicalEncode({
    v: f.format,
    kind: 'memledger.decision',
    subjectId: f.subjectId,
    seq: f.seq,
    prevHash: f.prevHash,
    proposalId: f.proposalId,
    contentHash: f.contentHash,
    decision: f.decision,
    decidedAt: f.decidedAt,
    note: f.note,
    keyId: f.keyId,
  });
}

/** The canonical encoding of what the owner decides on; its sha256Hex is the contentHash. */
export function proposalContentPayload(p: ProposalContent): string {
  return canonicalEncode({
    v: 1,
    kind: 'memledger.proposal',
    id: p.id,
    subjectId: p.subjectId,
    slot: p.slot,
    key: p.key,
    text: p.text,
    origin: p.origin,
    evidence: {
      turnId: p.evidence.turnId,
      seq: p.evidence.seq,
      quote: p.evidence.quote,
      tool: p.evidence.tool,
      ...(p.evidence.citations === undefined || p.evidence.citations === null
        ? {}
        : {
            citations: p.evidence.citations.map((c) => ({
              turn: c.turn,
              session: c.session,
              seq: c.seq,
              at: c.at,
            })),
          }),
    },
    attested: p.attested,
    ...(p.attestation === undefined || p.attestation === null
      ? {}
      : { attestation: { verdict: p.attestation.verdict, reason: p.attestation.reason } }),
    validFrom: p.validFrom ?? null,
    validTo: p.validTo ?? null,
  });
}

/** The hash a decision records of the proposal it decided. */
export function proposalContentHash(
  p: ProposalContent,
  crypto: Pick<ChainCrypto, 'sha256Hex'>,
): string {
  return crypto.sha256Hex(proposalContentPayload(p));
}

/**
 * What the owner lets a receipt-promoted fact of a delegated slot say: at most `maxChars`
 * characters and, when a template is signed, its words with each `{}` filled by 1 to
 * TEMPLATE_HOLE_MAX characters of one line (`textWithinBound`).
 */
export interface DelegationBound {
  maxChars: number;
  template: string | null;
}

/** What a delegation link signs: one action slot, whether it goes live, and on which tools. */
export interface Delegation {
  subjectId: string;
  slot: string;
  autoLive: boolean;
  /** Sorted and without duplicates (see `normalizeDelegation`). */
  tools: readonly string[];
  /**
   * What its facts may say. Encoded only when present: a delegation signed before bounds
   * existed hashes as it did, and bounds nothing.
   */
  bound?: DelegationBound | null;
}

/** The most characters one `{}` of a delegation's template stands for. */
export const TEMPLATE_HOLE_MAX = 80;

/** What a `{}` of a template never stands for: a line break, or a brace. */
const NOT_IN_HOLE = /[\n\r\u2028\u2029{}]/u;
/** Punctuation that ends a sentence or a clause when whitespace follows it. */
const CLAUSE_END = /[.!?;:。！？]/u;

/**
 * Whether a receipt-promoted fact's text is within what its delegation lets it say: at most
 * `maxChars` characters, and the template's words in order with each `{}` standing for 1 to
 * TEMPLATE_HOLE_MAX characters of one clause (one line, and no `.`, `!`, `?`, `;` or `:` followed
 * by a space in it or at its end: a hole cannot carry a sentence of its own). Linear in the text for a given template (the set of
 * places each part can end at is carried forward; no backtracking to blow up).
 */
export function textWithinBound(text: string, bound: DelegationBound | null | undefined): boolean {
  if (bound === null || bound === undefined) return true;
  if ([...text].length > bound.maxChars) return false;
  if (bound.template === null) return true;
  const [first, ...rest] = bound.template.split('{}');
  if (!text.startsWith(first ?? '')) return false;
  let at = new Set([(first ?? '').length]);
  for (const literal of rest) {
    const next = new Set<number>();
    for (const p of at) {
      for (let h = 1; h <= TEMPLATE_HOLE_MAX && p + h <= text.length; h++) {
        const c = text[p + h - 1] ?? '';
        if (NOT_IN_HOLE.test(c)) break;
        // a hole is one clause: no sentence of its own starts inside it, or right after it
        if (h > 1 && /\s/u.test(c) && CLAUSE_END.test(text[p + h - 2] ?? '')) break;
        const endsClause = CLAUSE_END.test(c) && /^\s/u.test(literal);
        if (!endsClause && text.startsWith(literal, p + h)) next.add(p + h + literal.length);
      }
    }
    if (next.size === 0) return false;
    at = next;
  }
  return at.has(text.length);
}

/** The same delegation with its tools sorted and deduplicated, as it is hashed and compared. */
export function normalizeDelegation(d: Delegation): Delegation {
  return { ...d, tools: [...new Set(d.tools)].sort() };
}

/** The canonical encoding of a delegation; its sha256Hex is the delegation link's contentHash. */
export function delegationPayload(d: Delegation): string {
  const n = normalizeDelegation(d);
  return canonicalEncode({
    v: 1,
    kind: 'memledger.delegation',
    subjectId: n.subjectId,
    slot: n.slot,
    autoLive: n.autoLive,
    tools: [...n.tools],
    ...(n.bound === undefined || n.bound === null
      ? {}
      : { bound: { maxChars: n.bound.maxChars, template: n.bound.template } }),
  });
}

const HEX64 = /^[0-9a-f]{64}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

function invalid(message: string): never {
  throw new EngineError('INVALID_ARGUMENT', `decision: ${message}`);
}

/** The fields of the link that follows `prev` (or the first link); refuses malformed input. */
export function nextLinkFields(
  prev: Pick<DecisionLink, 'subjectId' | 'seq' | 'hash'> | null,
  input: Omit<DecisionFields, 'seq' | 'prevHash' | 'format'>,
): DecisionFields {
  if (!(LINK_KINDS as readonly string[]).includes(input.decision)) {
    invalid(`"${String(input.decision)}" is not one of ${LINK_KINDS.join(', ')}`);
  }
  if (input.subjectId.length === 0) invalid('subjectId is empty');
  if (input.proposalId.length === 0) invalid('proposalId is empty');
  if (input.keyId.length === 0) invalid('keyId is empty');
  if (!HEX64.test(input.contentHash)) invalid('contentHash is not 64 lowercase hex characters');
  if (!ISO_UTC.test(input.decidedAt)) invalid(`decidedAt "${input.decidedAt}" is not ISO-8601 UTC`);
  if (prev !== null && prev.subjectId !== input.subjectId) {
    invalid(`the chain belongs to subject ${prev.subjectId}, not ${input.subjectId}`);
  }
  return {
    subjectId: input.subjectId,
    seq: prev === null ? 1 : prev.seq + 1,
    prevHash: prev === null ? GENESIS_HASH : prev.hash,
    proposalId: input.proposalId,
    contentHash: input.contentHash,
    decision: input.decision,
    decidedAt: input.decidedAt,
    note: input.note,
    keyId: input.keyId,
    format: LINK_FORMAT,
  };
}

/** Hashes and signs a link's fields with the owner's signer. */
export function sealLink(
  fields: DecisionFields,
  crypto: Pick<ChainCrypto, 'sha256Hex'>,
  signer: LinkSigner,
): DecisionLink {
  if (signer.keyId !== fields.keyId) {
    invalid(`the link names key ${fields.keyId} but the signer holds ${signer.keyId}`);
  }
  const payload = decisionPayload(fields);
  return { ...fields, hash: crypto.sha256Hex(payload), signature: signer.sign(payload) };
}

type LinkCheck = { code: ChainBreakCode; reason: string } | null;

/** What a link whose signature does not verify breaks the chain with. */
export const BAD_SIGNATURE = {
  code: 'BAD_SIGNATURE',
  reason: "the signature does not verify under the owner's key",
} as const;

/** Whether a link's signature verifies under the owner's key. */
export const linkSigned = (
  link: DecisionLink,
  opts: Pick<VerifyChainOptions, 'crypto' | 'publicKeyPem'>,
): boolean => {
  try {
    return opts.crypto.verify(opts.publicKeyPem, decisionPayload(link), link.signature);
  } catch {
    return false;
  }
};

/** Where a run of links continues from: the seq and hash of the link before it. */
export interface ChainTip {
  seq: number;
  hash: string;
}

/** The tip before the first link. */
export const GENESIS_TIP: ChainTip = { seq: 0, hash: GENESIS_HASH };

/**
 * Checks one link that should follow `tip`. `decided` holds the proposals decided by the links
 * already accepted (a proposal is decided once); delegations may repeat. `signature: 'covered'`
 * checks all but the signature, for a caller that checks the signature of a later link instead
 * (`ChainState.extend`).
 */
export function checkLink(
  link: DecisionLink,
  tip: ChainTip,
  opts: VerifyChainOptions,
  decided: Pick<ReadonlyMap<string, number>, 'get'>,
  signature: 'check' | 'covered' = 'check',
): LinkCheck {
  const expectedSeq = tip.seq + 1;
  if (link.seq !== expectedSeq) {
    return { code: 'SEQ_GAP', reason: `expected seq ${expectedSeq}, found ${String(link.seq)}` };
  }
  if (link.prevHash !== tip.hash) {
    return {
      code: 'PREV_HASH_MISMATCH',
      reason:
        tip.seq === 0
          ? 'the first link does not start from the genesis hash'
          : `prevHash does not match the hash of link ${tip.seq}`,
    };
  }
  let payload: string;
  try {
    payload = decisionPayload(link);
  } catch {
    return { code: 'HASH_MISMATCH', reason: 'the link holds a value that cannot be encoded' };
  }
  if (link.hash !== opts.crypto.sha256Hex(payload)) {
    return { code: 'HASH_MISMATCH', reason: 'the stored hash does not match the link fields' };
  }
  if (link.keyId !== opts.keyId) {
    return {
      code: 'KEY_MISMATCH',
      reason: `signed under key ${link.keyId}, but the subject's owner key is ${opts.keyId}`,
    };
  }
  if (signature === 'check' && !opts.crypto.verify(opts.publicKeyPem, payload, link.signature)) {
    return BAD_SIGNATURE;
  }
  // A delegation's content is checked against its slot by the trust rules (a slot may be
  // delegated again); a link that names no known kind is a forged one.
  if (!(LINK_KINDS as readonly string[]).includes(link.decision)) {
    return { code: 'HASH_MISMATCH', reason: 'the link records an unknown decision' };
  }
  if (!decidesProposal(link)) return null;
  if (opts.currentContentHash !== undefined) {
    const current = opts.currentContentHash(link.proposalId);
    if (current === null) {
      return { code: 'CONTENT_CHANGED', reason: `proposal ${link.proposalId} is missing` };
    }
    if (current !== link.contentHash) {
      return {
        code: 'CONTENT_CHANGED',
        reason: `proposal ${link.proposalId} was changed after the decision`,
      };
    }
  }
  const earlier = decided.get(link.proposalId);
  if (earlier !== undefined) {
    return {
      code: 'DUPLICATE_DECISION',
      reason: `proposal ${link.proposalId} was already decided at link ${earlier}`,
    };
  }
  return null;
}

/**
 * Walks the chain in stored order and reports the first link that fails, or the head hash.
 * Never throws on bad link data: a malformed link is a broken chain, not a crash.
 */
export function verifyChain(links: readonly DecisionLink[], opts: VerifyChainOptions): ChainReport {
  const decided = new Map<string, number>();
  let tip = GENESIS_TIP;
  for (const [index, link] of links.entries()) {
    const broken = checkLink(link, tip, opts, decided);
    if (broken !== null) {
      const brokenAt = Number.isSafeInteger(link.seq) ? link.seq : index + 1;
      return { ok: false, length: links.length, brokenAt, ...broken };
    }
    if (decidesProposal(link)) decided.set(link.proposalId, link.seq);
    tip = { seq: link.seq, hash: link.hash };
  }
  return {
    ok: true,
    length: links.length,
    headHash: tip.hash,
    rootHash: links[0]?.hash ?? null,
  };
}

/**
 * The same crypto, remembering every signature it found valid: what one process verified once
 * (same key, same signed bytes, same signature) it does not verify again. A changed byte is new
 * data and is verified afresh; a failure is never remembered.
 */
export function rememberingVerifier(crypto: ChainCrypto, limit = 1_000_000): ChainCrypto {
  const valid = new Set<string>();
  // a chain is verified under one key: its hash is worked out once, not per link
  let lastPem: string | null = null;
  let lastPemHash = '';
  const pemHash = (pem: string): string => {
    if (pem !== lastPem) {
      lastPem = pem;
      lastPemHash = crypto.sha256Hex(pem);
    }
    return lastPemHash;
  };
  return {
    sha256Hex: (data) => crypto.sha256Hex(data),
    keyIdOf: (pem) => crypto.keyIdOf(pem),
    verify(publicKeyPem, data, signatureB64) {
      const key = `${pemHash(publicKeyPem)}:${crypto.sha256Hex(data)}:${signatureB64}`;
      if (valid.has(key)) return true;
      const ok = crypto.verify(publicKeyPem, data, signatureB64);
      if (ok) {
        if (valid.size >= limit) valid.clear();
        valid.add(key);
      }
      return ok;
    },
  };
}
