import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { OwnerAnchor } from '../src/index.js';
import { DEFAULT_SUBJECT } from '../src/domain/defaults.js';
import { EngineError } from '../src/domain/errors.js';
import { headFileRecords, keyFileAnchor } from '../src/faces.js';
import type { CliIo } from './io.js';

/** What the anchor of a command is chosen from: its --key value, the environment, the home. */
interface AnchorContext {
  io: Pick<CliIo, 'env' | 'homeDir'>;
  values: object;
}

/** ~/.config/memledger: where owner key files live unless a path is named. */
export function defaultKeyDir(ctx: { io: Pick<CliIo, 'homeDir'> }): string {
  return join(ctx.io.homeDir, '.config', 'memledger');
}

/** The default key file of `subject`: ~/.config/memledger/owner-<subject>.key. */
export function defaultKeyPath(ctx: { io: Pick<CliIo, 'homeDir'> }, subject: string): string {
  return join(defaultKeyDir(ctx), `owner-${subject}.key`);
}

/**
 * The key file that anchors `subject` for every read this process makes: the one named by --key,
 * else MEMLEDGER_OWNER_KEY when that file exists, else owner-<subject>.key in ~/.config/memledger
 * when it exists; null when there is none. `named: false` (a subject not the command's own) skips
 * --key and MEMLEDGER_OWNER_KEY. Chosen by the subject the owner asked for, never by a
 * key id the store holds, so a store cannot pick the key it is checked against.
 */
export function anchorKeyFile(
  ctx: AnchorContext,
  subject: string,
  named = true,
): { path: string; explicit: boolean } | null {
  const given = named ? (ctx.values as { key?: unknown }).key : undefined;
  if (typeof given === 'string') return { path: given, explicit: true };
  const fromEnv = named ? ctx.io.env.MEMLEDGER_OWNER_KEY : undefined;
  if (fromEnv !== undefined && existsSync(fromEnv)) return { path: fromEnv, explicit: true };
  const path = defaultKeyPath(ctx, subject);
  return existsSync(path) ? { path, explicit: false } : null;
}

/** An owner key id as `ownerKeyId` writes it: what `--key-id` pins. */
const KEY_ID = /^ed25519:[0-9a-f]{16}$/;

/**
 * The engine's anchor source for a command. The command's own subject (--subject, default owner;
 * with `mcp --token-file`, the token's) is anchored by the key id pinned with --key-id (a server
 * that cannot read the owner's key file; the head file beside the default key file still counts
 * when it can be read), else by `anchorKeyFile`'s key file; every other subject (a server answers
 * tokens of many) by its default key file alone: --key and MEMLEDGER_OWNER_KEY name one
 * subject's key.
 */
export function cliAnchor(ctx: AnchorContext): (subject: string) => OwnerAnchor | null {
  const values = ctx.values as { subject?: unknown; 'key-id'?: unknown; 'token-file'?: unknown };
  // `mcp --token-file` serves the one subject its token names, whichever that is: null, any
  const mine =
    typeof values.subject === 'string'
      ? values.subject
      : typeof values['token-file'] === 'string'
        ? null
        : DEFAULT_SUBJECT;
  const pinned = typeof values['key-id'] === 'string' ? values['key-id'] : undefined;
  if (pinned !== undefined && !KEY_ID.test(pinned)) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `--key-id "${pinned.slice(0, 80)}": an owner key id is ed25519: and 16 hex digits (memledger chain verify shows it)`,
      { data: { field: 'key-id' } },
    );
  }
  return (subject) => {
    const own = mine === null || subject === mine;
    if (own && pinned !== undefined) {
      // the heads and revocations beside the default key file, when this process can read them
      return {
        keyId: pinned,
        source: 'the owner key id pinned with --key-id',
        ...headFileRecords(defaultKeyPath(ctx, subject), subject),
      };
    }
    const file = anchorKeyFile(ctx, subject, own);
    return file === null ? null : keyFileAnchor(file.path, subject);
  };
}
