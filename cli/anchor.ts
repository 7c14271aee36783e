import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { keyFileAnchor, type OwnerAnchor } from '../src/index.js';
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
 * when it exists; null when there is none. Chosen by the subject the owner asked for, never by a
 * key id the store holds, so a store cannot pick the key it is checked against.
 */
export function anchorKeyFile(
  ctx: AnchorContext,
  subject: string,
): { path: string; explicit: boolean } | null {
  const given = (ctx.values as { key?: unknown }).key;
  if (typeof given === 'string') return { path: given, explicit: true };
  const fromEnv = ctx.io.env.MEMLEDGER_OWNER_KEY;
  if (fromEnv !== undefined && existsSync(fromEnv)) return { path: fromEnv, explicit: true };
  const path = defaultKeyPath(ctx, subject);
  return existsSync(path) ? { path, explicit: false } : null;
}

/** The engine's anchor source for a command: `anchorKeyFile`'s key file, read for each subject. */
export function cliAnchor(ctx: AnchorContext): (subject: string) => OwnerAnchor | null {
  return (subject) => {
    const file = anchorKeyFile(ctx, subject);
    return file === null ? null : keyFileAnchor(file.path, subject);
  };
}
