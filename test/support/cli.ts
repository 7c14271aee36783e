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

export interface CliOptions {
  /** Answers to terminal prompts, in order; a run with answers is a terminal session. */
  answers?: string[];
  homeDir?: string;
  /** Runs as if stderr were a terminal (progress lines). */
  stderrIsTTY?: boolean;
}

/** Runs the CLI in-process with captured output. */
export async function runCliCaptured(
  argv: string[],
  env: Record<string, string> = {},
  options: CliOptions = {},
): Promise<CliResult> {
  const answers = [...(options.answers ?? [])];
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
  });
  return {
    code,
    stdout,
    stderr,
    json: () => JSON.parse(stdout) as unknown,
    errorCode: () => (JSON.parse(stderr) as { error: { code: string } }).error.code,
  };
}
