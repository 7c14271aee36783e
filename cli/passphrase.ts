import { readFileSync } from 'node:fs';
import { EngineError } from '../src/domain/errors.js';

/** The environment variable that may hold the owner passphrase. */
export const OWNER_PASSPHRASE_ENV = 'MEMLEDGER_OWNER_PASSPHRASE';

/** Where `readPassphrase` looks. */
export interface ReadPassphraseOptions {
  /** --passphrase-file: its first line is the passphrase. Takes precedence over the env. */
  file?: string;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * The owner passphrase from a file (first line, line ending stripped, other whitespace kept) or
 * MEMLEDGER_OWNER_PASSPHRASE (an empty value counts as unset). Null when neither gives one.
 */
export function readPassphrase(opts: ReadPassphraseOptions): string | null {
  if (opts.file !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new EngineError(
        'INVALID_ARGUMENT',
        `cannot read the passphrase file ${opts.file} (${code})`,
        { cause: error },
      );
    }
    const firstLine = text.split('\n', 1)[0] ?? '';
    const passphrase = firstLine.endsWith('\r') ? firstLine.slice(0, -1) : firstLine;
    if (passphrase.length === 0) {
      throw new EngineError(
        'PASSPHRASE_REQUIRED',
        `the passphrase file ${opts.file} has an empty first line`,
      );
    }
    return passphrase;
  }
  const fromEnv = opts.env[OWNER_PASSPHRASE_ENV];
  return fromEnv === undefined || fromEnv === '' ? null : fromEnv;
}
