// `memledger init` killed part-way left a directory that every rerun refused (DB_UNUSABLE "…is a
// non-empty directory that is not a memledger store"), and once it was removed by hand, an
// orphaned key file that refused the retry. Here a real child `memledger init` is SIGKILLed at
// each step: by the test-only hook MEMLEDGER_TEST_CRASH_AT=<step> (documented in
// cli/commands/init.ts and src/pglite/pglite-client.ts; the store's host process, which makes the
// store, gets the hook through its environment), and from outside while PGlite is still
// writing its data directory. Each time there is no store or a complete one, and a rerun succeeds.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, EngineError } from '../../../src/index.js';
import { storeClient } from '../../../src/engine/test-access.js';
import { MIGRATIONS } from '../../../src/store/migrations/index.js';
import { dropSchema, pgUrlWithSchema, uniqueSchema } from '../../support/engines.js';

const CLI = resolve(import.meta.dirname, '../../../dist/cli/main.js');
const PASS = 'crash me gently';
const tmpRoot = mkdtempSync(join(tmpdir(), 'memledger-init-crash-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));
/** The host part of a temporary's name: the first 8 hex digits of sha256(hostname). */
const HOST_TAG = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

let homes = 0;
/** A fresh home directory, so each case starts with no owner key file. */
function freshHome(): string {
  const home = join(tmpRoot, `home-${++homes}`);
  mkdirSync(home);
  return home;
}

function childEnv(home: string, crashAt?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, MEMLEDGER_OWNER_PASSPHRASE: PASS };
  delete env.MEMLEDGER_OWNER_KEY;
  delete env.MEMLEDGER_DB;
  delete env.MEMLEDGER_TEST_CRASH_AT;
  if (crashAt !== undefined) env.MEMLEDGER_TEST_CRASH_AT = crashAt;
  return env;
}

interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function cli(home: string, db: string, args: string[], crashAt?: string): Run {
  const r = spawnSync(process.execPath, [CLI, ...args, '--db', db, '--json'], {
    encoding: 'utf8',
    env: childEnv(home, crashAt),
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/**
 * `init` killed at `step`: it must die by SIGKILL, printing nothing. A `pglite-` step is a step of
 * making the store, which the store's host process does (src/pglite/host-main.ts): that process
 * dies there, and `init` says the host did not start.
 */
function crashInit(home: string, db: string, step: string): void {
  const r = cli(home, db, ['init'], step);
  expect(r.stdout).toBe('');
  if (step.startsWith('pglite-')) {
    expect(r.status, `init at ${step}: ${r.stderr}`).toBe(1);
    expect(JSON.parse(r.stderr)).toMatchObject({
      error: { code: 'DB_UNUSABLE', message: expect.stringContaining('did not start') },
    });
    return;
  }
  expect(r.signal, `init at ${step}: ${r.stderr}`).toBe('SIGKILL');
}

interface InitOutput {
  created: boolean;
  ownerKey: { keyId: string; keyFile: string | null; created: boolean; reused: boolean };
}

/** The rerun: `init` succeeds, and the store opens with its subject and key, chain verified. */
function rerunSucceeds(home: string, db: string): InitOutput {
  const r = cli(home, db, ['init']);
  expect(r.status, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout) as InitOutput;
  const verify = cli(home, db, ['chain', 'verify']);
  expect(verify.status, verify.stderr).toBe(0);
  expect(JSON.parse(verify.stdout)).toMatchObject({
    ok: true,
    length: 0,
    anchored: true,
    anchor: { keyFile: join(home, '.config', 'memledger', 'owner-owner.key') },
  });
  const session = cli(home, db, ['session', 'new']);
  expect(session.status, session.stderr).toBe(0);
  return out;
}

/** What opening the store says: OPENED with every migration applied, or the refusal's code. */
async function openState(db: string): Promise<string> {
  let engine;
  try {
    engine = await createEngine({ db, create: false });
  } catch (err) {
    if (err instanceof EngineError) return err.code;
    throw err;
  }
  try {
    const { rows } = await storeClient(engine).query<{ n: number }>(
      'SELECT count(*)::int AS n FROM schema_migrations',
    );
    return rows[0]?.n === MIGRATIONS.length ? 'OPENED' : `MIGRATED ${String(rows[0]?.n)}`;
  } finally {
    await engine.close();
  }
}

/** The temporaries `init` builds beside a new store directory. */
function temporaries(db: string): string[] {
  return readdirSync(dirname(db)).filter((n) => n.startsWith(`${basename(db)}.init-`));
}

/** Each case runs several child `init`s, each booting PGlite: seconds apiece on a busy machine. */
const SLOW = { timeout: 300_000 };

describe('init killed part-way [pglite]', () => {
  it('a new directory: no store until it is complete, and every rerun goes on', SLOW, async () => {
    const home = freshHome();
    const db = join(tmpRoot, 'new-store');
    const keyFile = join(home, '.config', 'memledger', 'owner-owner.key');

    // The key file is written first and whole; the store is not touched.
    crashInit(home, db, 'init-key-written');
    expect(existsSync(keyFile)).toBe(true);
    expect(existsSync(db)).toBe(false);

    // PGlite has made its data directory, beside the store's path, not at it.
    crashInit(home, db, 'pglite-aside-booted');
    expect(existsSync(db)).toBe(false);
    expect(temporaries(db)).toHaveLength(1);
    expect(await openState(db)).toBe('NOT_INITIALIZED');

    // Migrated and marked, not yet renamed: still no store; the dead run's temporary is cleared.
    const before = temporaries(db);
    crashInit(home, db, 'pglite-aside-ready');
    expect(existsSync(db)).toBe(false);
    expect(temporaries(db)).toHaveLength(1);
    expect(temporaries(db)).not.toEqual(before);

    // In place: a complete store, without the subject yet, then without its key.
    crashInit(home, db, 'init-store-opened');
    expect(temporaries(db)).toEqual([]);
    expect(await openState(db)).toBe('OPENED');
    expect(JSON.parse(cli(home, db, ['session', 'new']).stderr)).toMatchObject({
      error: { code: 'SUBJECT_NOT_FOUND' },
    });
    crashInit(home, db, 'init-subject-created');
    expect(await openState(db)).toBe('OPENED');

    // The orphaned key file from the first crash is reused, not a reason to refuse.
    const out = rerunSucceeds(home, db);
    expect(out.ownerKey).toMatchObject({ keyFile: keyFile, created: false, reused: true });
  });

  it(
    'an existing empty directory: built in place under a claim, and a rerun clears it',
    SLOW,
    async () => {
      const home = freshHome();
      const db = join(tmpRoot, 'empty-dir-store');
      mkdirSync(db);

      crashInit(home, db, 'pglite-in-place-booted');
      expect(readdirSync(db)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^memledger\.init-/), 'pgdata']),
      );
      expect(readdirSync(db)).not.toContain('memledger.json');
      const refused = cli(home, db, ['session', 'new']);
      expect(JSON.parse(refused.stderr)).toMatchObject({ error: { code: 'NOT_INITIALIZED' } });

      // The marker is written, the claim not yet removed: the store is complete.
      crashInit(home, db, 'pglite-in-place-ready');
      expect(await openState(db)).toBe('OPENED');

      rerunSucceeds(home, db);
      expect(readdirSync(db).filter((n) => n.startsWith('memledger.init-'))).toEqual([]);
    },
  );

  it('SIGKILL from outside while PGlite writes its data directory', SLOW, async () => {
    const home = freshHome();
    const db = join(tmpRoot, 'killed-store');
    const child = spawn(process.execPath, [CLI, 'init', '--db', db, '--json'], {
      env: childEnv(home),
      stdio: 'ignore',
    });
    const exited = new Promise<NodeJS.Signals | null>((done) => {
      child.on('exit', (_code, signal) => done(signal));
    });
    // Kill it once PGlite has started writing the temporary beside the store's path.
    let started = false;
    for (let i = 0; i < 2_000 && !started; i++) {
      const temp = temporaries(db)[0];
      started = temp !== undefined && existsSync(join(dirname(db), temp, 'pgdata'));
      if (!started) await sleep(10);
    }
    expect(started).toBe(true);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(existsSync(db)).toBe(false);

    // A temporary of a live creator (this test process) is left alone; one with something of
    // someone else's in it is too, even when its creator is dead.
    const live = join(dirname(db), `${basename(db)}.init-${HOST_TAG}-${process.pid}-0badc0de`);
    mkdirSync(join(live, 'pgdata'), { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    const foreign = join(dirname(db), `${basename(db)}.init-${HOST_TAG}-${dead.stdout}-0badcafe`);
    mkdirSync(foreign);
    writeFileSync(join(foreign, 'notes.txt'), 'mine');

    rerunSucceeds(home, db);
    expect(temporaries(db).sort()).toEqual([basename(foreign), basename(live)].sort());
  });

  it('never adopts or clears a directory that is not one of its own unfinished builds', async () => {
    const home = freshHome();
    // Data with no claim beside it (an earlier memledger's interrupted init, or a store whose
    // marker is gone) is refused with a hint, and left as it is.
    const earlier = join(tmpRoot, 'earlier-brick');
    mkdirSync(join(earlier, 'pgdata'), { recursive: true });
    writeFileSync(join(earlier, 'memledger.lock'), '{}');
    const r = cli(home, earlier, ['init']);
    expect(r.status).not.toBe(0);
    const { error } = JSON.parse(r.stderr) as { error: { code: string; message: string } };
    expect(error.code).toBe('DB_UNUSABLE');
    expect(error.message).toContain('as an `init` of an earlier memledger leaves it');
    expect(readdirSync(earlier).sort()).toEqual(['memledger.lock', 'pgdata']);
    // The key file this refused run wrote is taken back.
    const keyFile = join(home, '.config', 'memledger', 'owner-owner.key');
    expect(existsSync(keyFile)).toBe(false);

    // A claim whose creator is alive: the store is being made, so it is neither used nor cleared.
    const busy = join(tmpRoot, 'busy-store');
    const claim = `memledger.init-${HOST_TAG}-${process.pid}-00c0ffee`;
    mkdirSync(join(busy, claim), { recursive: true });
    const locked = cli(home, busy, ['init']);
    expect(JSON.parse(locked.stderr)).toMatchObject({ error: { code: 'STORE_LOCKED' } });
    expect(readdirSync(busy)).toEqual([claim]);
    expect(existsSync(keyFile)).toBe(false);
  });
});

describe('init killed part-way [postgres]', () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  it('a rerun completes the subject and the key a crash left missing', SLOW, async () => {
    const home = freshHome();
    const schema = uniqueSchema();
    schemas.push(schema);
    const db = pgUrlWithSchema(schema);

    crashInit(home, db, 'init-key-written');
    expect(await openState(db)).toBe('NOT_INITIALIZED');
    // Migrations run in one transaction: the store is there whole once opened.
    crashInit(home, db, 'init-store-opened');
    expect(await openState(db)).toBe('OPENED');
    crashInit(home, db, 'init-subject-created');
    // the key file the crashed init wrote anchors the subject; the store holds no key yet
    const verify = cli(home, db, ['chain', 'verify']);
    expect(JSON.parse(verify.stdout)).toMatchObject({
      ok: true,
      anchored: true,
      anchor: { storeKeyId: null },
    });

    const out = rerunSucceeds(home, db);
    expect(out).toMatchObject({ created: false, ownerKey: { created: false, reused: true } });
  });
});
