import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { ChainReport, SubjectHandle } from '../src/index.js';
import type { CommandContext } from './context.js';
import { chainAnchor, type KeyContext, type OwnerKeyLookup } from './owner-key-options.js';

/**
 * The owner's head file, beside the owner's key file (`<key file>.heads.json`): the last chain
 * head each decision made with that key signed, per store and subject. It lives outside the
 * store, so `chain verify` can find a chain whose head was cut (the last links deleted and their
 * facts set back), which no check over the store's own tables can see. It records, it does not
 * sign: a process that can write the owner's key directory can edit it, as it could the key.
 */
interface HeadEntry {
  seq: number;
  hash: string;
  /** The chain's link 1: names the chain even if the store's id is changed under it. */
  root?: string;
  at: string;
}

interface HeadFile {
  v: 1;
  heads: Record<string, HeadEntry>;
}

export const headFilePath = (keyFile: string): string => `${keyFile}.heads.json`;

const entryKey = (me: Pick<SubjectHandle, 'id' | 'storeId'>) => `${me.storeId}/${me.id}`;

function read(path: string): HeadFile {
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

/**
 * The head recorded for this store and subject: by the store's id, or else by the chain's first
 * link (`root`, from a verify), so a store whose id was changed is still checked against it.
 */
export function readSignedHead(
  keyFile: string,
  me: Pick<SubjectHandle, 'id' | 'storeId'>,
  root: string | null,
): { seq: number; hash: string; root?: string } | undefined {
  const heads = read(headFilePath(keyFile)).heads;
  const valid = (h: HeadEntry | undefined): h is HeadEntry =>
    h !== undefined && Number.isSafeInteger(h.seq) && h.seq >= 1 && typeof h.hash === 'string';
  let h: HeadEntry | undefined = heads[entryKey(me)];
  if (!valid(h) && root !== null) {
    h = Object.entries(heads).find(
      ([k, e]) => k.endsWith(`/${me.id}`) && valid(e) && e.root === root,
    )?.[1];
  }
  if (!valid(h)) return undefined;
  return { seq: h.seq, hash: h.hash, ...(typeof h.root === 'string' ? { root: h.root } : {}) };
}

/**
 * Records the head a decision just signed (never a lower one over a higher: two processes
 * deciding at once keep the longer). A head file that cannot be written is a warning on stderr,
 * not a failure: the decision is made and stored.
 */
export function recordSignedHead(
  ctx: Pick<CommandContext, 'io'>,
  keyFile: string,
  me: Pick<SubjectHandle, 'id' | 'storeId'>,
  head: { seq: number; hash: string; root: string },
): void {
  const path = headFilePath(keyFile);
  try {
    const file = read(path);
    const before = file.heads[entryKey(me)];
    if (before !== undefined && before.seq > head.seq) return;
    file.heads[entryKey(me)] = {
      seq: head.seq,
      hash: head.hash,
      root: head.root,
      at: new Date().toISOString(),
    };
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    ctx.io.stderr(
      `memledger: could not record the chain head in ${path}: ${(err as Error).message}\n`,
    );
  }
}

/**
 * The subject's chain checked as `chain verify` checks it: against the key file's public half
 * when it is at hand (the named one, else the owner's key file whose id is the store's), and
 * against the head the owner's decisions recorded beside it, so a cut head is found.
 */
export async function verifyAnchored(
  ctx: KeyContext,
  me: SubjectHandle,
): Promise<{
  anchor: OwnerKeyLookup;
  report: ChainReport;
  signedHead: { seq: number; hash: string; root?: string } | null;
}> {
  const anchor = await chainAnchor(ctx, me);
  const ownerKey = anchor.publicKey;
  const anchored = ownerKey === null ? {} : { ownerKey };
  let report = await me.owner.verifyChain(anchored);
  const signedHead =
    anchor.keyFile === null || !report.ok
      ? undefined
      : readSignedHead(anchor.keyFile, me, report.rootHash ?? null);
  if (signedHead !== undefined) report = await me.owner.verifyChain({ ...anchored, signedHead });
  return { anchor, report, signedHead: signedHead ?? null };
}
