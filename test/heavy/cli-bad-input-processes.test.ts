// Bad input to real `memledger` processes (the in-process CLI and the engine are refused the same
// inputs in test/property-bad-input.test.ts): each is refused with its code and the store is
// unchanged; a 5,000-deep proposal in a file is dropped alone.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { RETRACT_ARGV } from '../support/bad-cli-arbitraries.js';
import { QUOTE } from '../support/bad-input-arbitraries.js';
import { BUILT_CLI } from '../support/cli.js';
import { digests } from '../support/dump-store.js';
import { dropSchema, pgUrlWithSchema, uniqueSchema } from '../support/engines.js';

describe('the built CLI on a store: bad flags and files are refused and change nothing', () => {
  const schema = uniqueSchema();
  const db = pgUrlWithSchema(schema);
  const tmp = mkdtempSync(join(tmpdir(), 'memledger-prop-cli-'));
  let engine: Engine;
  let session = '';
  beforeAll(async () => {
    engine = await createEngine({ db });
    await engine.subjects.create();
    const me = engine.subject();
    session = (await me.sessions.create()).id;
    await me.turns.add({ sessionId: session, role: 'user', content: `${QUOTE}.` });
  });
  afterAll(async () => {
    await engine.close();
    await dropSchema(schema);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('refuses bad input in real memledger processes, the store unchanged', async () => {
    const write = (name: string, body: unknown) => {
      const file = join(tmp, name);
      writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body));
      return file;
    };
    const cases: Array<[string[], number, string]> = [
      [
        [
          'turn',
          'add',
          '--session',
          session,
          '--blocks-file',
          write('nul.json', [{ type: 'text', text: 'a\u0000b' }]),
        ],
        2,
        'INVALID_ARGUMENT',
      ],
      [
        [
          'turn',
          'add',
          '--session',
          session,
          '--blocks-file',
          write('tool.json', [
            { type: 'tool_use', name: 'x\u0000' },
            { type: 'text', text: 'ok' },
          ]),
        ],
        2,
        'INVALID_ARGUMENT',
      ],
      [
        [
          'turn',
          'add',
          '--session',
          session,
          '--blocks-file',
          write('raw.json', '[{"type":"text","text":"a\u0000b"}]'),
        ],
        2,
        'INVALID_ARGUMENT',
      ],
      [[...RETRACT_ARGV, '--due-days', '99999999'], 2, 'INVALID_ARGUMENT'],
      [['history', '--session', session, '--last', '99999999999'], 2, 'INVALID_ARGUMENT'],
      [
        [
          'turn',
          'add',
          '--session',
          session,
          '--role',
          'assistant',
          '--text',
          'hi',
          '--corrective',
        ],
        2,
        'INVALID_ARGUMENT',
      ],
    ];
    const before = await digests(engine);
    for (const [argv, exit, error] of cases) {
      const r = spawnSync(process.execPath, [BUILT_CLI, ...argv, '--db', db, '--json'], {
        encoding: 'utf8',
      });
      const got = (JSON.parse(r.stderr) as { error: { code: string } }).error.code;
      expect({ argv: argv.slice(0, 2), status: r.status, got }).toEqual({
        argv: argv.slice(0, 2),
        status: exit,
        got: error,
      });
    }
    expect(await digests(engine)).toEqual(before);
    // a 5,000-deep proposal in a file: dropped alone, only the dropped log grows
    const deep = write('deep.json', `[${'{"a":'.repeat(5000)}{}${'}'.repeat(5000)}]`);
    const r = spawnSync(
      process.execPath,
      [BUILT_CLI, 'propose', '--session', session, '--file', deep, '--db', db, '--json'],
      { encoding: 'utf8' },
    );
    // every proposal dropped: exit 5, the output still on stdout
    expect(r.status).toBe(5);
    expect(
      (JSON.parse(r.stdout) as { dropped: Array<{ code: string }> }).dropped.map((d) => d.code),
    ).toEqual(['INVALID_PROPOSAL']);
    const rest = Object.entries(before).filter(([table]) => table !== 'dropped_proposals');
    expect(await digests(engine, ['dropped_proposals'])).toEqual(Object.fromEntries(rest));
  });
});
