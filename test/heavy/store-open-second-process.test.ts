// A second process on an open embedded store: the built `memledger` gets STORE_LOCKED while this
// process holds the directory, and writes once it is released (the in-process opens of a data
// directory are in test/store-open.test.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { BUILT_CLI } from '../support/cli.js';
import { openCode } from '../support/engines.js';

const tmpRoot = mkdtempSync(join(tmpdir(), 'memledger-open-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

function freshDir(name: string): string {
  return join(tmpRoot, name);
}

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BUILT_CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, MEMLEDGER_DB: '' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('embedded data directory, a second process [pglite]', () => {
  it('gives a second process STORE_LOCKED while the directory is open, and works after', async () => {
    const dir = freshDir('locked');
    const holder = await createEngine({ db: dir });
    await holder.subjects.create();
    const s = await holder.subject().sessions.create({ id: 'busy' });
    await holder.subject().turns.add({ sessionId: s.id, role: 'user', content: 'first' });

    const blocked = cli([
      'turn',
      'add',
      '--db',
      dir,
      '--session',
      'busy',
      '--role',
      'user',
      '--text',
      'second',
      '--json',
    ]);
    expect(blocked.status).not.toBe(0);
    expect(JSON.parse(blocked.stderr)).toMatchObject({ error: { code: 'STORE_LOCKED' } });
    expect(blocked.stdout).toBe('');
    // the same process cannot open it twice either
    expect(await openCode(dir, false)).toBe('STORE_LOCKED');
    expect((await holder.subject().history.turns('busy')).map((t) => t.content)).toEqual(['first']);
    await holder.close();

    const after = cli([
      'turn',
      'add',
      '--db',
      dir,
      '--session',
      'busy',
      '--role',
      'user',
      '--text',
      'second',
      '--json',
    ]);
    expect(after.status).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ seq: 2, content: 'second' });
  });
});
