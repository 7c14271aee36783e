// The CLI's options are declared once as data: the parser, the typed values and the usage text
// all come from the declarations, so a misspelled option name fails to compile.
import { describe, expect, it } from 'vitest';
import { defineCommand } from '../cli/command.js';
import { SESSION_OPTION } from '../cli/options.js';
import { parseCommandLine } from '../cli/parse-options.js';
import { USAGE_TEXT } from '../cli/run.js';
import { commandHelp, synopsis } from '../cli/usage.js';
import { isEngineError, TURN_ROLES } from '../src/index.js';
import { runCliCaptured } from './support/cli.js';

const example = defineCommand({
  path: ['example', 'run'],
  summary: 'An example.',
  positionals: ['<id>'],
  options: {
    ...SESSION_OPTION,
    role: { kind: 'choice', choices: TURN_ROLES, invalid: 'UNKNOWN_ROLE', help: 'who' },
    limit: { kind: 'int', value: 'N', min: 1, help: 'how many' },
    tags: { kind: 'list', value: 'a,b', help: 'tags' },
    all: { kind: 'flag', help: 'everything' },
  },
  async run(ctx) {
    const session: string = ctx.values.session;
    const role: (typeof TURN_ROLES)[number] | undefined = ctx.values.role;
    const limit: number | undefined = ctx.values.limit;
    const all: boolean = ctx.values.all;
    // @ts-expect-error: a misspelled option name is a type error
    const misspelled: unknown = ctx.values['sesion'];
    void [session, role, limit, all, misspelled];
  },
});

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isEngineError(err)) return err.code;
    throw err;
  }
  return 'PARSED';
}

describe('CLI option declarations', () => {
  const parse = (...argv: string[]) => parseCommandLine(argv, example.options, true);

  it('parses each kind into its typed value', () => {
    const { values, globals, positionals } = parse(
      'x1',
      '--session',
      's1',
      '--role',
      'user',
      '--limit',
      '3',
      '--tags',
      'a, b',
      '--json',
    );
    expect(values).toEqual({ session: 's1', role: 'user', limit: 3, tags: ['a', 'b'], all: false });
    expect(globals).toEqual({ db: undefined, json: true, help: false });
    expect(positionals).toEqual(['x1']);
  });

  it('refuses a missing required value, a value outside its vocabulary, and a bad number', () => {
    expect(codeOf(() => parse('--role', 'user'))).toBe('SESSION_REQUIRED');
    expect(codeOf(() => parse('--session', 's', '--role', 'robot'))).toBe('UNKNOWN_ROLE');
    expect(codeOf(() => parse('--session', 's', '--limit', '0'))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => parse('--session', 's', '--tags', 'a,,b'))).toBe('INVALID_ARGUMENT');
    expect(codeOf(() => parse('--session', 's', '--bogus'))).toBe('INVALID_ARGUMENT');
    // asking for help is never refused
    expect(codeOf(() => parse('--help'))).toBe('PARSED');
  });

  it('names the flag in its messages', () => {
    try {
      parse('--session', 's', '--role', 'robot');
    } catch (err) {
      expect((err as Error).message).toContain('--role');
    }
  });

  it('generates the synopsis and the help from the declarations', () => {
    expect(synopsis(example).split('\n')).toEqual([
      'memledger example run <id> --session S [--role user|assistant|system|tool] [--limit N] [--tags a,b]',
      '       [--all]',
    ]);
    const help = commandHelp(example);
    for (const name of ['--session S', '--role', '--limit N', '--tags a,b', '--all', '--json']) {
      expect(help).toContain(name);
    }
  });

  it('lists every command in `memledger --help`, and gives each its own help', async () => {
    expect(USAGE_TEXT).toContain('memledger turn add --session S');
    expect(USAGE_TEXT).toContain('memledger reindex');
    const help = await runCliCaptured(['commitment', 'add', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: memledger commitment add --title T [--due YYYY-MM-DD]');
  });

  it('shows the proposal file format and the all-dropped exit in `propose --help`', async () => {
    const help = await runCliCaptured(['propose', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      '"evidence": { "turn": 1, "quote": "I fly to Lisbon on Friday" }',
    );
    expect(help.stdout).toContain(
      'Exits 5 when the file held proposals and the gate dropped every one.',
    );
  });
});
