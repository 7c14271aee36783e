// Issue 37 at the CLI: `export`, `import`, `backup`, `restore` and `move`, each with what it
// refuses (exit 1 with its code, exit 2 for a usage error) and the output a user reads; the head a
// subject's chain reached is recorded beside the owner's key file for the store it was imported
// into. The stores are embedded directories and a PostgreSQL schema; the CLI runs in process.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from './support/cli.js';
import { dropSchema, pgUrlWithSchema, uniqueSchema } from './support/engines.js';
import { sharedEngines } from './support/shared-engines.js';

const root = mkdtempSync(join(tmpdir(), 'memledger-cli-transfer-'));
const schema = uniqueSchema();
// commands share one kept engine per store, as a long-running host does
const engines = sharedEngines();
afterAll(async () => {
  await engines.close();
  await dropSchema(schema);
  rmSync(root, { recursive: true, force: true });
});

const keyFile = join(root, 'owner.key');
const env = { MEMLEDGER_OWNER_PASSPHRASE: 'pw', MEMLEDGER_OWNER_KEY: keyFile };
const home = join(root, 'home');
mkdirSync(home);
const run = (...args: string[]) => runCliCaptured(args, env, { homeDir: home, engines });
const source = join(root, 'a');

describe('export, import, backup, restore and move at the CLI [pglite]', () => {
  beforeAll(async () => {
    expect((await run('init', '--db', source)).code).toBe(0);
    await run('session', 'new', '--db', source, '--id', 's1');
    await run(
      'turn',
      'add',
      '--db',
      source,
      '--session',
      's1',
      '--role',
      'user',
      '--text',
      'I live in Lisbon.',
    );
    const file = join(root, 'p.json');
    writeFileSync(
      file,
      JSON.stringify([
        {
          slot: 'what_i_know_about_user',
          text: 'The user lives in Lisbon.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I live in Lisbon' },
        },
      ]),
    );
    const p = await run('propose', '--db', source, '--session', 's1', '--file', file, '--json');
    const id = (p.json() as { proposed: Array<{ id: string }> }).proposed[0]!.id;
    expect((await run('decide', id, 'approve', '--db', source)).code).toBe(0);
  });

  it('exports to a new folder and imports it into a new store, anchored by the key file', async () => {
    const out = join(root, 'ex');
    const e = await run('export', '--db', source, '--out', out);
    expect(e.code).toBe(0);
    expect(e.stdout).toMatch(
      /^exported subject owner to .*ex: \d+ rows in 22 files, .* decision chain of 1 links\n$/,
    );
    expect(existsSync(join(out, 'manifest.json'))).toBe(true);

    const target = join(root, 'b');
    const i = await run('import', out, '--db', target, '--json');
    expect(i.code).toBe(0);
    const done = i.json() as { subject: string; anchored: boolean; chain: { length: number } };
    expect(done).toMatchObject({ subject: 'owner', anchored: true, chain: { length: 1 } });
    const memory = await run('memory', '--db', target);
    expect(memory.stdout).toContain('what_i_know_about_user: The user lives in Lisbon.');
    const verify = await run('chain', 'verify', '--db', target);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain('signed head: link 1 (recorded beside the key file)');
    // the head was recorded for the new store's id
    const heads = JSON.parse(readFileSync(`${keyFile}.heads.json`, 'utf8')) as {
      heads: Record<string, { seq: number }>;
    };
    expect(Object.keys(heads.heads)).toHaveLength(2);

    const again = await run('import', out, '--db', target);
    expect([again.code, again.errorCode()]).toEqual([1, 'SUBJECT_NOT_EMPTY']);
  });

  it('refuses a non-empty --out, a missing folder and a missing --out, with their codes', async () => {
    const busy = join(root, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'x'), 'x');
    const e = await run('export', '--db', source, '--out', busy);
    expect([e.code, e.errorCode()]).toEqual([2, 'INVALID_ARGUMENT']);
    expect(readFileSync(join(busy, 'x'), 'utf8')).toBe('x');
    const missing = await run('import', join(root, 'nowhere'), '--db', join(root, 'c'));
    expect([missing.code, missing.errorCode()]).toEqual([1, 'EXPORT_UNREADABLE']);
    const noOut = await run('export', '--db', source);
    expect([noOut.code, noOut.errorCode()]).toEqual([2, 'INVALID_ARGUMENT']);
  });

  it('shows progress on a terminal, on stderr only, and --json stays one document', async () => {
    const r = await runCliCaptured(
      ['export', '--db', source, '--out', join(root, 'ex-tty'), '--json'],
      env,
      { homeDir: home, stderrIsTTY: true, engines },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/exporting: \d+\/\d+ rows/);
    expect(r.json()).toMatchObject({ manifest: { subject: 'owner' } });
  });

  it('backs up and restores into a new store only; moves to PostgreSQL and back', async () => {
    const bk = join(root, 'bk');
    expect((await run('backup', '--db', source, '--out', bk)).code).toBe(0);
    const restored = join(root, 'r');
    const r = await run('restore', bk, '--db', restored);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^restored store .* 1 subject\(s\) \(owner\), every chain verified\n$/,
    );
    expect((await run('memory', '--db', restored)).stdout).toContain('The user lives in Lisbon.');
    // a restore opens the store it writes itself: the process that read it has exited
    await engines.close();
    const twice = await run('restore', bk, '--db', restored);
    expect([twice.code, twice.errorCode()]).toEqual([1, 'STORE_NOT_EMPTY']);

    const pg = pgUrlWithSchema(schema);
    const m = await run('move', '--db', source, '--to', pg);
    expect(m.code).toBe(0);
    expect(m.stdout).toContain('the source');
    expect((await run('memory', '--db', pg)).stdout).toContain('The user lives in Lisbon.');
    expect((await run('chain', 'verify', '--db', pg)).code).toBe(0);
    const back = join(root, 'back');
    expect((await run('move', '--db', pg, '--to', back)).code).toBe(0);
    expect((await run('memory', '--db', back)).stdout).toContain('The user lives in Lisbon.');
    // the source is as it was, and still answers
    expect((await run('memory', '--db', source)).stdout).toContain('The user lives in Lisbon.');
    const self = await run('move', '--db', source, '--to', source);
    expect([self.code, self.errorCode()]).toEqual([2, 'INVALID_ARGUMENT']);
  });

  it("refuses a forger's export as a .tar as it does as a folder: the owner's key file is the export's subject's", async () => {
    const forger = join(root, 'forger.key');
    const fdb = join(root, 'forged-store');
    expect((await run('init', '--db', fdb, '--subject', 'carol', '--key', forger)).code).toBe(0);
    await run('session', 'new', '--db', fdb, '--subject', 'carol', '--key', forger, '--id', 's');
    const tar = join(root, 'carol.tar');
    expect(
      (await run('export', '--db', fdb, '--subject', 'carol', '--key', forger, '--out', tar)).code,
    ).toBe(0);
    const heads = existsSync(`${keyFile}.heads.json`)
      ? readFileSync(`${keyFile}.heads.json`, 'utf8')
      : null;
    for (const from of [tar, join(root, 'carol-folder')]) {
      if (from !== tar) {
        expect(
          (await run('export', '--db', fdb, '--subject', 'carol', '--key', forger, '--out', from))
            .code,
        ).toBe(0);
      }
      // MEMLEDGER_OWNER_KEY names the owner's real key file
      const r = await run(
        'import',
        from,
        '--db',
        join(root, `into-${from === tar ? 'tar' : 'dir'}`),
      );
      expect([r.code, r.errorCode()]).toEqual([1, 'WRONG_KEY']);
    }
    const after = existsSync(`${keyFile}.heads.json`)
      ? readFileSync(`${keyFile}.heads.json`, 'utf8')
      : null;
    expect(after).toBe(heads);
  });
});
