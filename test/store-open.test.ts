import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { dropSchema, openCode, pgUrlWithSchema, uniqueSchema } from './support/engines.js';

const tmpRoot = mkdtempSync(join(tmpdir(), 'memledger-open-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

function freshDir(name: string): string {
  return join(tmpRoot, name);
}

describe('embedded data directory [pglite]', () => {
  it('survives a restart with every turn and receipt', async () => {
    const dir = freshDir('restart');
    const first = await createEngine({ db: dir });
    await first.subjects.create();
    const s = await first.subject().sessions.create({ id: 'kept' });
    await first.subject().turns.add({ sessionId: s.id, role: 'user', content: 'remember me' });
    await first.subject().turns.add({
      sessionId: s.id,
      role: 'assistant',
      content: 'I will.',
      receipt: { tools: ['note'], sources: ['n-1'] },
    });
    const before = await first.subject().history.turns(s.id);
    await first.close();

    const second = await createEngine({ db: dir, create: false });
    const after = await second.subject().history.turns('kept');
    expect(after).toEqual(before);
    const next = await second
      .subject()
      .turns.add({ sessionId: 'kept', role: 'user', content: 'again' });
    expect(next.recorded && next.turn.seq).toBe(3);
    const migrations = await storeClient(second).query<{ n: number }>(
      'SELECT count(*)::int AS n FROM schema_migrations',
    );
    expect(migrations.rows[0]?.n).toBe(MIGRATIONS.length);
    await second.close();
  });

  it('takes over a lock left by a process that died', async () => {
    const dir = freshDir('stale');
    const e = await createEngine({ db: dir });
    await e.subjects.create();
    await e.close();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    writeFileSync(
      join(dir, 'memledger.lock'),
      JSON.stringify({ pid: Number(dead.stdout), host: (await import('node:os')).hostname() }),
    );
    expect(await openCode(dir, false)).toBe('OPENED');
    expect(existsSync(join(dir, 'memledger.lock'))).toBe(false);
  });

  it('refuses an unusable --db and creates nothing', async () => {
    const file = join(tmpRoot, 'a-file');
    writeFileSync(file, 'not a store');
    expect(await openCode(file, true)).toBe('DB_UNUSABLE');

    const foreign = freshDir('foreign');
    mkdirSync(foreign);
    writeFileSync(join(foreign, 'notes.txt'), 'mine');
    expect(await openCode(foreign, true)).toBe('DB_UNUSABLE');
    expect(readdirSync(foreign)).toEqual(['notes.txt']);

    const orphan = join(tmpRoot, 'no-parent', 'store');
    expect(await openCode(orphan, true)).toBe('DB_UNUSABLE');
    expect(existsSync(join(tmpRoot, 'no-parent'))).toBe(false);

    const missing = freshDir('never-initialized');
    expect(await openCode(missing, false)).toBe('NOT_INITIALIZED');
    expect(existsSync(missing)).toBe(false);

    expect(await openCode('mysql://localhost/x', true)).toBe('DB_UNUSABLE');
    expect(await openCode('   ', true)).toBe('DB_UNUSABLE');
  });

  it('refuses a store whose applied migration was altered', async () => {
    const dir = freshDir('tampered');
    const e = await createEngine({ db: dir });
    await storeClient(e).query(
      `UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1`,
    );
    await e.close();
    expect(await openCode(dir, false)).toBe('MIGRATION_MISMATCH');
    expect(existsSync(join(dir, 'memledger.lock'))).toBe(false);
  });

  it('refuses a store from a newer memledger', async () => {
    const dir = freshDir('newer');
    const e = await createEngine({ db: dir });
    await storeClient(e).query(
      `INSERT INTO schema_migrations (version, name, checksum) VALUES (999, 'future', 'x')`,
    );
    await e.close();
    expect(await openCode(dir, false)).toBe('STORE_TOO_NEW');
  });
});

describe('server store [postgres]', () => {
  it('applies migrations once and shares one store between engines', async () => {
    const schema = uniqueSchema();
    const url = pgUrlWithSchema(schema);
    try {
      expect(await openCode(url, false)).toBe('NOT_INITIALIZED');
      const [a, b] = await Promise.all([createEngine({ db: url }), createEngine({ db: url })]);
      await a.subjects.create();
      const s = await a.subject().sessions.create({ id: 'shared' });
      await b.subject().turns.add({ sessionId: s.id, role: 'user', content: 'from b' });
      expect((await a.subject().history.turns('shared')).map((t) => t.content)).toEqual(['from b']);
      const m = await storeClient(a).query<{ n: number }>(
        'SELECT count(*)::int AS n FROM schema_migrations',
      );
      expect(m.rows[0]?.n).toBe(MIGRATIONS.length);
      await storeClient(a).query(`UPDATE schema_migrations SET checksum = 'edited'`);
      await Promise.all([a.close(), b.close()]);
      expect(await openCode(url, false)).toBe('MIGRATION_MISMATCH');
    } finally {
      await dropSchema(schema);
    }
  });

  it('reports an unreachable server as DB_UNUSABLE', async () => {
    expect(await openCode('postgres://postgres@127.0.0.1:1/none', true)).toBe('DB_UNUSABLE');
    expect(await openCode('postgres://postgres@127.0.0.1:5432/test?schema=Bad-Name', true)).toBe(
      'DB_UNUSABLE',
    );
  });
});
