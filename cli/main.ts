#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import type { CliIo } from './io.js';
import { runCli } from './run.js';

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  readFile: (path) => readFile(path, 'utf8'),
};

process.exitCode = await runCli(process.argv.slice(2), processIo);
