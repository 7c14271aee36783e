#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { createInterface } from 'node:readline';
import type { CliIo } from './io.js';
import { runCli } from './run.js';

function prompt(question: string, options: { hidden?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
    if (options.hidden === true) {
      // Echo nothing typed after the question; readline has no public switch for this.
      const rlOut = rl as unknown as { _writeToOutput: (s: string) => void };
      rlOut._writeToOutput = (s: string) => {
        if (s.includes(question)) process.stdout.write(question);
        else if (s.includes('\n') || s.includes('\r')) process.stdout.write('\n');
      };
    }
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer);
    });
  });
}

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  readFile: (path) => readFile(path, 'utf8'),
  isTTY: process.stdin.isTTY === true && process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
  prompt,
  homeDir: homedir(),
};

// No top-level await: the bundled command (rolldown.config.mjs) has chunks that import this
// module back, and a pending top-level await would hold them (and the process) forever.
void runCli(process.argv.slice(2), processIo).then((code) => {
  process.exitCode = code;
});
