import { join } from 'node:path';
import { EngineError, readPassphrase } from '../src/index.js';
import { stringValue } from './args.js';
import type { CommandContext } from './context.js';

export const KEY_OPTIONS = {
  key: { type: 'string' },
  'passphrase-file': { type: 'string' },
} as const;

/** --key, then MEMLEDGER_OWNER_KEY, then ~/.config/memledger/owner-<subject>.key. */
export function keyPath(ctx: CommandContext, subject: string): string {
  return (
    stringValue(ctx.values, 'key') ??
    ctx.io.env.MEMLEDGER_OWNER_KEY ??
    join(ctx.io.homeDir, '.config', 'memledger', `owner-${subject}.key`)
  );
}

/** --passphrase-file, then MEMLEDGER_OWNER_PASSPHRASE; null when neither is given. */
export function passphraseIfGiven(ctx: CommandContext): string | null {
  const file = stringValue(ctx.values, 'passphrase-file');
  try {
    return readPassphrase({ ...(file === undefined ? {} : { file }), env: ctx.io.env });
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw new EngineError('KEY_UNREADABLE', `cannot read the passphrase file ${file ?? ''}`, {
      cause: err,
    });
  }
}

/** --passphrase-file, then MEMLEDGER_OWNER_PASSPHRASE, then a hidden prompt at a terminal. */
export async function passphrase(ctx: CommandContext, question: string): Promise<string> {
  const value = passphraseIfGiven(ctx);
  if (value !== null) return value;
  if (!ctx.io.isTTY) {
    throw new EngineError(
      'PASSPHRASE_REQUIRED',
      'the owner passphrase is required: --passphrase-file P, MEMLEDGER_OWNER_PASSPHRASE, or a terminal',
    );
  }
  return ctx.io.prompt(question, { hidden: true });
}
