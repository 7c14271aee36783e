import { join } from 'node:path';
import { EngineError } from '../src/index.js';
import type { CommandContext } from './context.js';
import type { OptionSpecs } from './options.js';
import { readPassphrase } from './passphrase.js';

/** `--key F` and `--passphrase-file P`: the owner key file and what opens it. */
export const KEY_OPTIONS = {
  key: {
    kind: 'text',
    value: 'F',
    help: 'the owner key file (else $MEMLEDGER_OWNER_KEY, else ~/.config/memledger/owner-<subject>.key)',
  },
  'passphrase-file': {
    kind: 'text',
    value: 'P',
    help: 'a file whose first line is the owner passphrase (else $MEMLEDGER_OWNER_PASSPHRASE, else a prompt)',
  },
} as const satisfies OptionSpecs;

type KeyContext = CommandContext<Pick<typeof KEY_OPTIONS, 'key'>>;
type PassphraseContext = CommandContext<Pick<typeof KEY_OPTIONS, 'passphrase-file'>>;

/** --key, then MEMLEDGER_OWNER_KEY, then ~/.config/memledger/owner-<subject>.key. */
export function keyPath(ctx: KeyContext, subject: string): string {
  return (
    ctx.values.key ??
    ctx.io.env.MEMLEDGER_OWNER_KEY ??
    join(ctx.io.homeDir, '.config', 'memledger', `owner-${subject}.key`)
  );
}

/** --passphrase-file, then MEMLEDGER_OWNER_PASSPHRASE; null when neither is given. */
export function passphraseIfGiven(ctx: PassphraseContext): string | null {
  const file = ctx.values['passphrase-file'];
  return readPassphrase({ ...(file === undefined ? {} : { file }), env: ctx.io.env });
}

/** --passphrase-file, then MEMLEDGER_OWNER_PASSPHRASE, then a hidden prompt at a terminal. */
export async function passphrase(ctx: PassphraseContext, question: string): Promise<string> {
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
