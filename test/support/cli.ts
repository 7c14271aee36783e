import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { runCli } from '../../cli/run.js';
import { createEngine, type KdfCost } from '../../src/index.js';
import type { SharedEngines } from './shared-engines.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as exactly one JSON document. */
  json(): unknown;
  /** The error code of a failed run, from stderr. */
  errorCode(): string;
}

export interface CliOptions {
  /** Answers to terminal prompts, in order; a run with answers is a terminal session. */
  answers?: string[];
  homeDir?: string;
  /** Runs as if stderr were a terminal (progress lines). */
  stderrIsTTY?: boolean;
  /** Engines kept open across commands (else each command opens and closes its store). */
  engines?: SharedEngines;
  /** The scrypt cost of owner keys (default `test`; `production` for keys a real process opens). */
  keyCost?: KdfCost;
}

/** Runs the CLI in-process with captured output. */
export async function runCliCaptured(
  argv: string[],
  env: Record<string, string> = {},
  options: CliOptions = {},
): Promise<CliResult> {
  const answers = [...(options.answers ?? [])];
  const engines = options.engines;
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
    isTTY: options.answers !== undefined,
    stderrIsTTY: options.stderrIsTTY ?? false,
    prompt: async (question) => {
      stdout += question;
      const answer = answers.shift();
      if (answer === undefined) throw new Error(`unexpected prompt: ${question}`);
      return answer;
    },
    homeDir: options.homeDir ?? '/nonexistent-home',
    // each command opens its store in process (a host needs the built program: the heavy tier)
    openEngine:
      engines === undefined
        ? async (config) => {
            const engine = await createEngine({ ...config, shared: false });
            return { engine, release: () => engine.close() };
          }
        : (config) => engines.open(config),
    ...((options.keyCost ?? 'test') === 'production' ? {} : { keyCost: 'test' as const }),
  });
  return {
    code,
    stdout,
    stderr,
    json: () => JSON.parse(stdout) as unknown,
    errorCode: () => (JSON.parse(stderr) as { error: { code: string } }).error.code,
  };
}

/** The built command line (`npm run build` first). */
export const BUILT_CLI = resolve(import.meta.dirname, '../../dist/cli/main.js');

/** The parent's environment without any MEMLEDGER_* variable, so only a test's own count. */
export const ENV_WITHOUT_MEMLEDGER: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(process.env).filter(
    (e): e is [string, string] => !e[0].startsWith('MEMLEDGER_') && e[1] !== undefined,
  ),
);

/**
 * Runs the built `memledger` as a child process, asynchronously (a fake server in this process
 * can answer it), with `env` over the parent's environment less its MEMLEDGER_* variables.
 */
export function runBuiltCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BUILT_CLI, ...args],
      { env: { ...ENV_WITHOUT_MEMLEDGER, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        done({ code, stdout, stderr });
      },
    );
  });
}
