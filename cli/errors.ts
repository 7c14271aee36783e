import { isEngineError, type ErrorCode } from '../src/index.js';

/** The one place the CLI turns a failure into `{"error":{"code","message"}}` and an exit code. */
export function describeError(err: unknown): {
  code: ErrorCode;
  message: string;
  exitCode: number;
} {
  if (isEngineError(err)) {
    const usage = err.code === 'INVALID_ARGUMENT' || err.code === 'UNKNOWN_COMMAND';
    return { code: err.code, message: err.message, exitCode: usage ? 2 : 1 };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'INTERNAL', message: `internal error: ${message}`, exitCode: 70 };
}

export function renderError(err: unknown): { text: string; exitCode: number } {
  const { code, message, exitCode } = describeError(err);
  return { text: JSON.stringify({ error: { code, message } }) + '\n', exitCode };
}
