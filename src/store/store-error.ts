import { EngineError } from '../domain/errors.js';

/** Database errors are wrapped once, here at the store boundary. */
export async function guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw new EngineError('STORE_ERROR', `${what} failed: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** The SQLSTATE of a database error (`23505` for a unique violation…), if it has one. */
export function pgErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A database error as a driver reports it, its SQLSTATE in `code`: made by memledger where a
 * statement's failure crosses a thread (a PGlite snapshot) or a timeout is its own doing.
 */
export class DatabaseError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'DatabaseError';
  }
}
