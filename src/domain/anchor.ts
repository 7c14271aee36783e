import type { ChainCrypto } from './decision-chain.js';
import type { HeadCut } from './trust.js';
import type { ChainState } from './chain-state.js';

/**
 * The owner's anchor: what a reading process holds from outside the store to check it against
 * (the owner's key, the heads the owner signed, the tokens the owner revoked), and the rules that
 * compare a store with it. Pure; the key file is read in src/crypto/owner-anchor.ts.
 */

/**
 * The owner's key and signed heads as the process that reads holds them, from outside the store:
 * the key file's public half and the head file beside it, or a key id pinned in a server's
 * configuration. A store whose owner key differs is tampered, and nothing it signed is shown; a
 * chain that ends before an anchored head was cut. See docs/TRUST.md ("The anchor").
 */
export interface OwnerAnchor {
  /** The owner key id (`ed25519:` and 16 hex digits): a pinned fingerprint is this alone. */
  keyId: string;
  /** The public key (PEM); absent when only the key id is pinned. */
  publicKeyPem?: string;
  /** Heads the owner's decisions recorded outside the store (the head file). */
  heads?: readonly AnchoredHead[];
  /**
   * Tokens the owner revoked, recorded outside the store (the head file): refused whatever the
   * store's rows and links say.
   */
  revokedTokens?: readonly string[];
  /** Where the anchor came from, in words, for the integrity block ("the key file …"). */
  source: string;
}

/** A chain head a decision signed, recorded outside the store. */
export interface AnchoredHead {
  seq: number;
  hash: string;
  /** The chain's link 1: names the chain even if the store's id is changed under it. */
  root?: string;
  /** The store it was recorded for (`Engine.storeId`); absent: any store. */
  storeId?: string;
}

/** Why the store's owner key is not the anchor's; null when it is (or the store holds none). */
export function anchorKeyMismatch(
  anchor: OwnerAnchor,
  stored: { keyId: string | null; publicKeyPem: string | null },
  crypto: Pick<ChainCrypto, 'keyIdOf'>,
): string | null {
  if (stored.keyId === null && stored.publicKeyPem === null) return null;
  const same =
    stored.keyId === anchor.keyId &&
    (anchor.publicKeyPem === undefined
      ? stored.publicKeyPem !== null && crypto.keyIdOf(stored.publicKeyPem) === anchor.keyId
      : stored.publicKeyPem === anchor.publicKeyPem);
  if (same) return null;
  const storedId =
    stored.keyId === null
      ? 'none'
      : stored.keyId === anchor.keyId
        ? `${stored.keyId} in name only`
        : stored.keyId;
  return `the store's owner key (${storedId}) is not the owner's key ${anchor.keyId} (from ${anchor.source}): the store's key was replaced, so nothing signed with it is trusted`;
}

/**
 * The anchored head that applies to this store's chain: the longest recorded for the store's id
 * (or for no store in particular), else the longest recorded for a chain with this first link.
 */
export function anchoredHead(
  anchor: OwnerAnchor | null,
  storeId: string,
  rootHash: string | null,
): AnchoredHead | null {
  const heads = anchor?.heads ?? [];
  const mine = heads.filter((h) => h.storeId === undefined || h.storeId === storeId);
  const pool =
    mine.length > 0 ? mine : heads.filter((h) => rootHash !== null && h.root === rootHash);
  let best: AnchoredHead | null = null;
  for (const h of pool) if (best === null || h.seq > best.seq) best = h;
  return best;
}

/** Whether the verified chain still holds an anchored head: null when it does. */
export function anchoredHeadCut(
  state: ChainState,
  head: AnchoredHead,
  found: number,
  source: string,
): HeadCut | null {
  const cut = (reason: string): HeadCut => ({
    source: 'owner',
    expected: { seq: head.seq, hash: head.hash },
    found,
    reason,
  });
  if (head.root !== undefined && state.rootHash !== null && state.rootHash !== head.root) {
    return cut(`${source} records another first link than the chain holds`);
  }
  if (state.length < head.seq) {
    return cut(
      `${source} records link ${head.seq}, and the chain's verified links end at ${state.length}`,
    );
  }
  if (state.hashes[head.seq - 1] !== head.hash) {
    return cut(`${source} records another link ${head.seq} than the chain holds`);
  }
  return null;
}

/** Whether `value` has an anchor's shape (one handed across a boundary: a call, a socket). */
export function isOwnerAnchor(value: unknown): value is OwnerAnchor {
  const a = value as Partial<OwnerAnchor> | null;
  const strings = (v: unknown): boolean =>
    v === undefined || (Array.isArray(v) && v.every((s) => typeof s === 'string'));
  return (
    typeof a === 'object' &&
    a !== null &&
    typeof a.keyId === 'string' &&
    typeof a.source === 'string' &&
    (a.publicKeyPem === undefined || typeof a.publicKeyPem === 'string') &&
    strings(a.revokedTokens) &&
    (a.heads === undefined ||
      (Array.isArray(a.heads) &&
        a.heads.every(
          (h: Partial<AnchoredHead> | null) =>
            typeof h === 'object' &&
            h !== null &&
            Number.isSafeInteger(h.seq) &&
            typeof h.hash === 'string' &&
            (h.root === undefined || typeof h.root === 'string') &&
            (h.storeId === undefined || typeof h.storeId === 'string'),
        )))
  );
}
