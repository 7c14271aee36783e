import type { ChainReport, SubjectHandle } from '../src/index.js';
import { anchoredHead } from '../src/domain/anchor.js';
import {
  headFilePath,
  keyFileAnchor,
  recordKeyFileHead,
  recordKeyFileRevocation,
} from '../src/faces.js';
import type { CommandContext } from './context.js';
import { chainAnchor, type KeyContext, type OwnerKeyLookup } from './owner-key-options.js';

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
    recordKeyFileHead(keyFile, me.storeId, me.id, head);
  } catch (err) {
    ctx.io.stderr(
      `memledger: could not record the chain head in ${path}: ${(err as Error).message}\n`,
    );
  }
}

/**
 * Records beside the key file that the owner revoked a token: an anchored process refuses it
 * whatever the store says. A head file that cannot be written is a warning, as for a head.
 */
export function recordRevokedToken(
  ctx: Pick<CommandContext, 'io'>,
  keyFile: string,
  me: Pick<SubjectHandle, 'id' | 'storeId'>,
  tokenId: string,
): void {
  try {
    recordKeyFileRevocation(keyFile, me.storeId, me.id, tokenId);
  } catch (err) {
    ctx.io.stderr(
      `memledger: could not record the revocation in ${headFilePath(keyFile)}: ${(err as Error).message}\n`,
    );
  }
}

/**
 * The subject's chain checked as `chain verify` checks it: against the owner's anchor (the key
 * file named by --key or MEMLEDGER_OWNER_KEY, else the subject's default key file; never one a
 * key id in the store chooses), its key and the head its decisions recorded, so a swapped key and
 * a cut head are found. With no key file, the store's own copy of the key (`anchor.keyFile` null).
 */
export async function verifyAnchored(
  ctx: KeyContext,
  me: SubjectHandle,
): Promise<{
  anchor: OwnerKeyLookup;
  report: ChainReport;
  signedHead: { seq: number; hash: string } | null;
}> {
  const lookup = await chainAnchor(ctx, me);
  const anchor = lookup.keyFile === null ? null : keyFileAnchor(lookup.keyFile, me.id);
  const report = await me.owner.verifyChain(anchor === null ? {} : { anchor });
  const root = report.ok ? (report.rootHash ?? null) : null;
  const head = anchoredHead(anchor, me.storeId, root);
  return {
    anchor: lookup,
    report,
    signedHead: head === null ? null : { seq: head.seq, hash: head.hash },
  };
}
