import { ServerError } from '../server/server-errors.js';
import { EngineError } from '../src/domain/errors.js';
import type { CliIo } from './io.js';

/** A token from a file (`--token-file F`): trimmed; an unreadable or empty file is refused. */
export async function readTokenFile(io: CliIo, path: string): Promise<string> {
  let text: string;
  try {
    text = await io.readFile(path);
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new EngineError('INVALID_ARGUMENT', `cannot read the token file ${path} (${why})`, {
      data: { field: 'token-file' },
      cause: err,
    });
  }
  const token = text.trim();
  if (token === '') {
    throw new ServerError('TOKEN_REQUIRED', `the token file ${path} is empty`);
  }
  return token;
}
