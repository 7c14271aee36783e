import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { EngineError } from '../domain/errors.js';
import type { AnchoredHead, OwnerAnchor } from '../domain/anchor.js';
import { readOwnerPublicKey } from './owner-key-file.js';

/**
 * The owner's anchor from outside the store: the public half of the owner's key file (readable
 * without the passphrase) and the head file beside it (`<key file>.heads.json`), where each
 * decision made with that key records the chain head it signed, per store and subject.
 *
 * A process that can write the owner's key directory can replace both, as it could the key
 * itself: the anchor is as safe as that directory (docs/TRUST.md, "Who can do what").
 */

/** One recorded head: `heads["<storeId>/<subject>"]`. */
interface HeadEntry {
  seq: number;
  hash: string;
  root?: string;
  at: string;
  /** Tokens of this store and subject the owner revoked. */
  revoked?: string[];
}

export interface HeadFile {
  v: 1;
  heads: Record<string, HeadEntry>;
}

export const headFilePath = (keyFile: string): string => `${keyFile}.heads.json`;

/** The head file's key for a store and subject. */
export const headEntryKey = (storeId: string, subjectId: string): string =>
  `${storeId}/${subjectId}`;

/** The head file as stored; an empty one when it is missing or unreadable. */
export function readHeadFile(path: string): HeadFile {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<HeadFile>;
    if (parsed.v === 1 && typeof parsed.heads === 'object' && parsed.heads !== null) {
      return { v: 1, heads: parsed.heads };
    }
  } catch {
    // missing or unreadable: no head recorded
  }
  return { v: 1, heads: {} };
}

/** The tokens the file records as revoked for one subject, in any store. */
export function subjectRevocations(file: HeadFile, subjectId: string): string[] {
  const out = new Set<string>();
  for (const [k, e] of Object.entries(file.heads)) {
    if (k.slice(k.lastIndexOf('/') + 1) !== subjectId || typeof e !== 'object' || e === null)
      continue;
    for (const id of Array.isArray(e.revoked) ? e.revoked : []) {
      if (typeof id === 'string') out.add(id);
    }
  }
  return [...out].sort();
}

/** Every head the file records for one subject, with the store each was recorded for. */
export function subjectHeads(file: HeadFile, subjectId: string): AnchoredHead[] {
  const out: AnchoredHead[] = [];
  for (const [k, e] of Object.entries(file.heads)) {
    const slash = k.lastIndexOf('/');
    if (slash < 0 || k.slice(slash + 1) !== subjectId) continue;
    if (typeof e !== 'object' || e === null) continue;
    if (!Number.isSafeInteger(e.seq) || e.seq < 1 || typeof e.hash !== 'string') continue;
    out.push({
      seq: e.seq,
      hash: e.hash,
      storeId: k.slice(0, slash),
      ...(typeof e.root === 'string' ? { root: e.root } : {}),
    });
  }
  return out;
}

const stamp = (path: string): string => {
  try {
    const s = statSync(path);
    return `${s.mtimeMs}/${s.size}/${s.ino}`;
  } catch {
    return 'none';
  }
};

const read = new Map<string, { stamp: string; anchor: OwnerAnchor }>();

/**
 * What the head file beside `keyFile` records for `subjectId` (its heads and revoked tokens), for
 * an anchor that pins a key id but can still read the owner's head file; none when it cannot.
 */
export function headFileRecords(
  keyFile: string,
  subjectId: string,
): Pick<OwnerAnchor, 'heads' | 'revokedTokens'> {
  const file = readHeadFile(headFilePath(keyFile));
  return {
    heads: subjectHeads(file, subjectId),
    revokedTokens: subjectRevocations(file, subjectId),
  };
}

/**
 * The anchor the key file at `path` gives `subjectId`: its public key, and the heads its head file
 * records for that subject. KEY_UNREADABLE when the key file cannot be read. Read again only when
 * either file changed (a server asks on every read).
 */
export function keyFileAnchor(path: string, subjectId: string): OwnerAnchor {
  const key = `${path}\u0000${subjectId}`;
  const now = `${stamp(path)}|${stamp(headFilePath(path))}`;
  const known = read.get(key);
  if (known !== undefined && known.stamp === now) return known.anchor;
  const pub = readOwnerPublicKey(path);
  const file = readHeadFile(headFilePath(path));
  const anchor: OwnerAnchor = {
    keyId: pub.keyId,
    publicKeyPem: pub.publicKeyPem,
    heads: subjectHeads(file, subjectId),
    revokedTokens: subjectRevocations(file, subjectId),
    source: `the owner's key file ${basename(path)}`,
  };
  read.set(key, { stamp: now, anchor });
  return anchor;
}

/**
 * Records in the head file beside `keyFile` the head a decision just signed for a store and
 * subject (never a lower one over a higher: two processes deciding at once keep the longer). The
 * file is replaced whole (mode 0600); a failure throws, and the caller decides what it means.
 */
export function recordKeyFileHead(
  keyFile: string,
  storeId: string,
  subjectId: string,
  head: { seq: number; hash: string; root: string },
): void {
  const path = headFilePath(keyFile);
  const file = readHeadFile(path);
  const k = headEntryKey(storeId, subjectId);
  const before = file.heads[k];
  if (before !== undefined && before.seq > head.seq) return;
  // the same link with another hash: the chain was cut and decided on again; the entry stays
  if (before !== undefined && before.seq === head.seq && before.hash !== head.hash) {
    throw new EngineError(
      'CHAIN_BROKEN',
      `it records link ${before.seq} of this chain with another hash: the chain was cut (run \`memledger chain verify\`); left as it was`,
    );
  }
  file.heads[k] = {
    ...before,
    seq: head.seq,
    hash: head.hash,
    root: head.root,
    at: new Date().toISOString(),
  };
  writeHeadFile(path, file);
}

/**
 * Records beside `keyFile` that the owner revoked a token of a store and subject: an anchored
 * process refuses it whatever the store says (its row cleared, its revoke link deleted).
 */
export function recordKeyFileRevocation(
  keyFile: string,
  storeId: string,
  subjectId: string,
  tokenId: string,
): void {
  const path = headFilePath(keyFile);
  const file = readHeadFile(path);
  const k = headEntryKey(storeId, subjectId);
  const entry = file.heads[k] ?? { seq: 0, hash: '', at: new Date().toISOString() };
  const revoked = new Set(Array.isArray(entry.revoked) ? entry.revoked : []);
  if (revoked.has(tokenId)) return;
  revoked.add(tokenId);
  file.heads[k] = { ...entry, revoked: [...revoked].sort() };
  writeHeadFile(path, file);
}

/** The head file replaced whole (mode 0600): a temp file beside it, renamed over it. */
function writeHeadFile(path: string, file: HeadFile): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}
