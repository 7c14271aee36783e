import { readFile } from 'node:fs/promises';
import { runCli } from '../../cli/run.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as exactly one JSON document. */
  json(): unknown;
  /** The error code of a failed run, from stderr. */
  errorCode(): string;
}

/** Runs the CLI in-process with captured output. */
export async function runCliCaptured(
  argv: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env,
    readFile: (path) => readFile(path, 'utf8'),
  });
  return {
    code,
    stdout,
    stderr,
    json: () => JSON.parse(stdout) as unknown,
    errorCode: () => (JSON.parse(stderr) as { error: { code: string } }).error.code,
  };
}
