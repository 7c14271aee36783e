import type { ErrorCode } from '../src/index.js';
import { codedError, type ServerErrorCode } from '../server/server-errors.js';

/**
 * Codes only the CLI raises (the engine never does); documented in docs/ERRORS.md, section CLI.
 */
export const CLI_ERROR_CODES = [
  'UNKNOWN_COMMAND',
  'NO_TERMINAL',
  'SERVER_UNREACHABLE',
  'NOT_ANCHORED',
] as const;
/** A code only the CLI raises. */
export type CliErrorCode = (typeof CLI_ERROR_CODES)[number];

/** A refusal by the CLI itself, printed exactly like an engine error. */
export class CliError extends Error {
  readonly code: CliErrorCode;

  constructor(code: CliErrorCode, message: string) {
    super(message);
    this.name = 'CliError';
    this.code = code;
  }
}

/** Usage errors exit 2; a bug (anything unexpected) 70; every other refusal 1. */
const USAGE_CODES: ReadonlySet<string> = new Set(['INVALID_ARGUMENT', 'UNKNOWN_COMMAND']);

/** What a CLI user can do about an engine refusal that names no flag. */
const HINTS: Partial<Record<string, string>> = {
  SUBJECT_NOT_FOUND: ' (name the subject with --subject, or create it: memledger init --subject S)',
  SESSION_NOT_FOUND: ' (a session belongs to one subject: pass the --subject it was made under)',
  // only reflect and summarize call a model here (bench confabulation runs the fake without one)
  LLM_NOT_CONFIGURED:
    '; or try it without a model: add --rehearse (the scripted fake model answers, nothing is stored)',
};

/** The one place the CLI turns a failure into `{"error":{"code","message"}}` and an exit code. */
export function describeError(err: unknown): {
  code: ErrorCode | ServerErrorCode | CliErrorCode;
  message: string;
  exitCode: number;
} {
  const coded = err instanceof CliError ? err : codedError(err);
  if (coded !== null) {
    const hint = HINTS[coded.code] ?? '';
    return {
      code: coded.code,
      message: coded.message + hint,
      exitCode: USAGE_CODES.has(coded.code) ? 2 : 1,
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'INTERNAL', message: `internal error: ${message}`, exitCode: 70 };
}

/** The error document for stderr, and the exit code. */
export function renderError(err: unknown): { text: string; exitCode: number } {
  const { code, message, exitCode } = describeError(err);
  return { text: JSON.stringify({ error: { code, message } }) + '\n', exitCode };
}
