import { chownSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createEngine, EngineError } from '../src/index.js';
import { openShared, setHostLauncher, type LaunchHost } from '../src/pglite/host-launch.js';
import { connectHost, type HostClient } from '../src/pglite/host-client.js';
import { FrameReader, socketPathFor, writeFrame } from '../src/pglite/host-protocol.js';
import { StoreHost } from '../src/pglite/store-host.js';
import { PgliteClient } from '../src/pglite/pglite-client.js';
import { embeddedTemplate } from '../src/store/embedded-template.js';
import { migrate } from '../src/store/migrator.js';
import { code } from './support/errors.js';
import { inProcessHosts } from './support/in-process-host.js';

// [pglite] The store host (src/pglite/store-host.ts) started in this process, and its clients:
// the protocol, isolation between clients' transactions, refusals, a host lost and found again.
// The detached host process and the CLI on it: test/heavy/shared-store.test.ts.

const hosts: StoreHost[] = [];
const clients: HostClient[] = [];
const roots: string[] = [];

/** Starts hosts in this process, as the built CLI starts a detached one. */
const inProcess: LaunchHost = inProcessHosts(hosts);

function newDir(): string {
  const root = mkdtempSync(join(tmpdir(), 'mlh-'));
  roots.push(root);
  return join(root, 'store');
}

async function open(dir: string, create = true): Promise<HostClient> {
  const client = await openShared({ location: dir, create, launch: inProcess });
  clients.push(client);
  return client;
}

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const h of hosts.splice(0)) await h.stop();
  setHostLauncher(undefined);
});

let shared: { dir: string; host: StoreHost } | undefined;

/** One store for the tests that only run statements (each on tables of its own). */
async function sharedStore(): Promise<string> {
  if (shared === undefined) {
    const dir = newDir();
    const template = embeddedTemplate();
    const host = await StoreHost.start({
      dir,
      create: true,
      ...(template === undefined ? {} : { template }),
    });
    shared = { dir, host };
  }
  return shared.dir;
}

afterAll(async () => {
  await shared?.host.stop();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

describe('[pglite] the store host', () => {
  it('serves two clients one store: what one commits the other reads, with the same values', async () => {
    const dir = await sharedStore();
    const a = await open(dir);
    const b = await open(dir);
    expect(a.hostPid).toBe(b.hostPid); // the second found the first's host
    await a.exec('CREATE TABLE tv (id int PRIMARY KEY, at timestamptz, raw bytea, doc jsonb)');
    const at = new Date('2026-12-04T10:00:00.000Z');
    await a.query('INSERT INTO tv VALUES (1, $1, $2, $3)', [
      at,
      new Uint8Array([1, 2, 255]),
      { k: [1, 'x'] },
    ]);
    const { rows } = await b.query<{ id: number; at: Date; raw: Uint8Array; doc: unknown }>(
      'SELECT * FROM tv',
    );
    expect(rows).toEqual([{ id: 1, at, raw: new Uint8Array([1, 2, 255]), doc: { k: [1, 'x'] } }]);
    expect(rows[0]?.at).toBeInstanceOf(Date);
  });

  it('keeps two clients’ interleaved transactions apart: the second starts when the first ends', async () => {
    const dir = await sharedStore();
    const a = await open(dir);
    const b = await open(dir);
    await a.exec('CREATE TABLE ti (id int PRIMARY KEY, v text)');
    const order: string[] = [];
    let releaseA!: () => void;
    const aMayCommit = new Promise<void>((r) => (releaseA = r));
    const txA = a.transaction(async (tx) => {
      await tx.query(`INSERT INTO ti VALUES (1, 'a')`);
      order.push('a wrote');
      await aMayCommit;
      const seen = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM ti');
      order.push(`a sees ${seen.rows[0]?.n}`);
    });
    await until(() => order.includes('a wrote'));
    // b's transaction and b's plain read both wait for a's transaction: no dirty read
    const txB = b.transaction(async (tx) => {
      const seen = await tx.query<{ v: string }>('SELECT v FROM ti ORDER BY id');
      order.push(`b sees ${seen.rows.map((r) => r.v).join(',')}`);
      await tx.query(`INSERT INTO ti VALUES (2, 'b')`);
    });
    const readB = b.query<{ n: number }>('SELECT count(*)::int AS n FROM ti').then((r) => {
      order.push(`b read ${r.rows[0]?.n}`);
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(order).toEqual(['a wrote']);
    releaseA();
    await Promise.all([txA, txB, readB]);
    expect(order.slice(0, 3)).toEqual(['a wrote', 'a sees 1', 'b sees a']);
    // b's plain read ran after a's commit (it waited for the store, then for b's transaction)
    expect(order[3]).toMatch(/^b read [12]$/);
    expect(order).toHaveLength(4);
    const after = await a.query<{ v: string }>('SELECT v FROM ti ORDER BY id');
    expect(after.rows.map((r) => r.v)).toEqual(['a', 'b']);
  });

  it('rolls back a transaction that throws, and one whose client goes away mid-transaction', async () => {
    const dir = await sharedStore();
    const a = await open(dir);
    const b = await open(dir);
    await a.exec('CREATE TABLE tr (id int PRIMARY KEY)');
    await expect(
      a.transaction(async (tx) => {
        await tx.query('INSERT INTO tr VALUES (1)');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    let inside!: () => void;
    const entered = new Promise<void>((r) => (inside = r));
    const abandoned = b.transaction(async (tx) => {
      await tx.query('INSERT INTO tr VALUES (2)');
      inside();
      await new Promise(() => undefined); // never ends: its process dies
    });
    abandoned.catch(() => undefined);
    await entered;
    await b.close(); // as its process dies: the host rolls its transaction back
    const { rows } = await a.query('SELECT id FROM tr');
    expect(rows).toEqual([]);
  });

  it('passes database errors with their SQLSTATE, and a failed statement leaves its transaction usable only to end', async () => {
    const dir = await sharedStore();
    const a = await open(dir);
    await a.exec('CREATE TABLE te (id int PRIMARY KEY)');
    await a.query('INSERT INTO te VALUES (1)');
    const err = await a.query('INSERT INTO te VALUES (1)').catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('23505');
    expect(err).not.toBeInstanceOf(EngineError);
    await expect(a.transaction((tx) => tx.query('SELECT * FROM missing_table'))).rejects.toThrow(
      /missing_table/,
    );
    expect((await a.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('is found again after it went away: in-flight work fails HOST_LOST, the next statement starts a new host', async () => {
    const dir = newDir();
    const a = await open(dir);
    await a.exec('CREATE TABLE t (id int)');
    const first = hosts[0] as StoreHost;
    await first.stop();
    expect(existsSync(socketPathFor(dir))).toBe(false);
    await until(() => !a.connected);
    await a.query('INSERT INTO t VALUES (1)');
    expect(hosts).toHaveLength(2);
    expect((await a.query('SELECT count(*)::int AS n FROM t')).rows).toEqual([{ n: 1 }]);
    // a statement the host never answers
    const stuck = a.transaction(async (tx) => {
      await tx.query('SELECT 1');
      await (hosts[1] as StoreHost).stop();
      await tx.query('SELECT 2');
    });
    expect(await code(stuck)).toBe('HOST_LOST');
  });

  it('stops when no client has been connected for its idle time, and lets the store go', async () => {
    const dir = newDir();
    const a = await openShared({ location: dir, create: true, idleMs: 150, launch: inProcess });
    await a.close();
    const host = hosts[0] as StoreHost;
    await host.stopped;
    expect(existsSync(socketPathFor(dir))).toBe(false);
    // the lock is free: a program may open it in process
    const own = await PgliteClient.open({ location: dir, create: false });
    await own.close();
  });

  it('does not stop while a client is connected, however long it is idle', async () => {
    const dir = newDir();
    const a = await openShared({ location: dir, create: true, idleMs: 100, launch: inProcess });
    clients.push(a);
    await new Promise((r) => setTimeout(r, 300));
    expect((await a.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect(hosts).toHaveLength(1);
  });

  it('takes over a socket a killed host left behind', async () => {
    const dir = newDir();
    const a = await open(dir);
    await a.close();
    await (hosts[0] as StoreHost).stop();
    // what SIGKILL leaves: the socket file, nobody listening
    const stale = createServer();
    await new Promise<void>((r) => stale.listen(socketPathFor(dir), r));
    await closeKeepingFile(stale, socketPathFor(dir));
    expect(existsSync(socketPathFor(dir))).toBe(true);
    const b = await open(dir, false);
    expect((await b.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('is STORE_LOCKED when a program holds the store in process (not shared)', async () => {
    const dir = newDir();
    const template = embeddedTemplate();
    const own = await PgliteClient.open({
      location: dir,
      create: true,
      prepare: (c) => migrate(c),
      ...(template === undefined ? {} : { template }),
    });
    try {
      const err = await openShared({ location: dir, create: false, launch: inProcess }).catch(
        (e: unknown) => e,
      );
      expect((err as EngineError).code).toBe('STORE_LOCKED');
    } finally {
      await own.close();
    }
  });

  it('engines share a store through it: createEngine({ shared: true })', async () => {
    const dir = newDir();
    setHostLauncher(inProcess);
    const one = await createEngine({ db: dir, shared: true });
    await one.subjects.create();
    const two = await createEngine({ db: dir, create: false, shared: { idleSeconds: 60 } });
    try {
      const s = await one.subject().sessions.create();
      await one.subject().turns.add({ sessionId: s.id, role: 'user', content: 'I moved to Lund' });
      const seen = await two.subject().history.turns(s.id);
      expect(seen.map((t) => t.content)).toEqual(['I moved to Lund']);
    } finally {
      await one.close();
      await two.close();
    }
    expect(hosts).toHaveLength(1);
  });

  it('the CLI refuses a bad MEMLEDGER_HOST_IDLE_SECONDS before touching the store', async () => {
    const { runCliCaptured } = await import('./support/cli.js');
    const dir = newDir();
    for (const bad of ['soon', '0', '-5', '90000']) {
      const r = await runCliCaptured(['session', 'list', '--db', dir, '--json'], {
        MEMLEDGER_HOST_IDLE_SECONDS: bad,
      });
      expect(r.errorCode()).toBe('INVALID_ARGUMENT');
      expect(r.stderr).toContain('MEMLEDGER_HOST_IDLE_SECONDS');
    }
    expect(existsSync(dir)).toBe(false);
  });

  it('an idle host hands the store over to a program that opens it in process; a busy one does not', async () => {
    const dir = newDir();
    const a = await open(dir);
    const busy = await createEngine({ db: dir, create: false }).catch((e: unknown) => e);
    expect((busy as EngineError).code).toBe('STORE_LOCKED');
    expect((busy as EngineError).message).toMatch(/shared: true/);
    expect((await a.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]); // still served
    await a.close();
    // idle now (as after a command): the program takes the store over
    const own = await createEngine({ db: dir, create: false });
    try {
      await (hosts[0] as StoreHost).stopped;
      expect(existsSync(socketPathFor(dir))).toBe(false);
      expect(await own.subjects.list()).toEqual([]);
    } finally {
      await own.close();
    }
  });

  it('refuses a bad idle time before touching the store', async () => {
    const dir = newDir();
    expect(await code(createEngine({ db: dir, shared: { idleSeconds: -1 } }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(existsSync(dir)).toBe(false);
  });
});

describe('[pglite] the host against a careless or hostile client', () => {
  it('gives a snapshot of the store (what SQL probes run on) booted in this process', async () => {
    const dir = await sharedStore();
    const a = await open(dir);
    await a.exec('CREATE TABLE tsnap (id int)');
    await a.query('INSERT INTO tsnap VALUES (1), (2)');
    const snap = await a.snapshot();
    try {
      await a.query('INSERT INTO tsnap VALUES (3)');
      expect((await snap.query('SELECT count(*)::int AS n FROM tsnap')).rows).toEqual([{ n: 2 }]);
    } finally {
      await snap.close();
    }
    expect(await code(snap.query('SELECT 1'))).toBe('DB_UNUSABLE');
  });

  it('answers a step of a transaction that is over with why, and never runs it', async () => {
    const dir = await sharedStore();
    const a = await open(dir);
    await a.exec('CREATE TABLE ts (id int)');
    const raw = await connectHost(socketPathFor(dir), dir);
    try {
      await raw?.send({ op: 'begin', tx: 7 });
      await raw?.send({ op: 'commit', tx: 7 });
      const late = await raw
        ?.send({ op: 'query', sql: 'INSERT INTO ts VALUES (1)', params: [], tx: 7 })
        .catch((e: unknown) => e);
      expect(String((late as Error).message)).toMatch(/transaction 7 is over: it was committed/);
      const never = await raw
        ?.send({ op: 'query', sql: 'SELECT 1', params: [], tx: 8 })
        .catch((e: unknown) => e);
      expect(String((never as Error).message)).toMatch(/never begun/);
      expect((await a.query('SELECT count(*)::int AS n FROM ts')).rows).toEqual([{ n: 0 }]);
    } finally {
      raw?.close();
    }
  });

  it('drops a connection that sends what is no request, and serves the others on', async () => {
    const dir = await sharedStore();
    const a = await open(dir);
    const { connect } = await import('node:net');
    const { writeFrame } = await import('../src/pglite/host-protocol.js');
    const bad = connect(socketPathFor(dir));
    const closed = new Promise((r) => bad.on('close', r));
    bad.on('error', () => undefined);
    bad.resume();
    bad.on('connect', () => writeFrame(bad, null));
    await closed;
    expect((await a.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});

describe('[pglite] where the socket is', () => {
  it('in the store; in a private folder when the path is too long or others may write the store', async () => {
    const { chmodSync, mkdirSync, statSync } = await import('node:fs');
    const short = newDir();
    mkdirSync(short);
    expect(socketPathFor(short)).toBe(join(short, 'memledger.sock'));
    chmodSync(short, 0o777);
    expect(socketPathFor(short)).toMatch(/^\/tmp\/memledger-\d+\/[0-9a-f]{24}\.sock$/);
    chmodSync(short, 0o755);
    // a path whose host could not bind its staging socket in it (dir + 25 bytes over 100)
    const root = mkdtempSync(join(tmpdir(), 'mlh-'));
    roots.push(root);
    const long = join(root, 'x'.repeat(Math.max(1, 80 - root.length)));
    expect(Buffer.byteLength(long)).toBeGreaterThan(75);
    const path = socketPathFor(long);
    expect(path.startsWith(join(short, '..'))).toBe(false);
    // and a store there is served through it
    const a = await open(long);
    expect((await a.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
  });
});

describe('[pglite] a client refuses a socket it cannot trust (HOST_REFUSED)', () => {
  it('a file that is not a socket', async () => {
    const dir = newDir();
    const a = await open(dir);
    await a.close();
    await (hosts[0] as StoreHost).stop();
    writeFileSync(socketPathFor(dir), 'not a socket');
    expect(await code(connectHost(socketPathFor(dir), dir))).toBe('HOST_REFUSED');
  });

  it('a socket of another user', async () => {
    const dir = newDir();
    await open(dir);
    const path = socketPathFor(dir);
    chownSync(path, 4242, 4242);
    expect(await code(connectHost(path, dir))).toBe('HOST_REFUSED');
    // negative control: the same socket, this user's again, is taken
    chownSync(path, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
    const ok = await connectHost(path, dir);
    expect(ok).not.toBeNull();
    ok?.close();
  });

  it('a listener that is not a memledger host', async () => {
    const dir = newDir();
    const a = await open(dir);
    await a.close();
    await (hosts[0] as StoreHost).stop();
    const impostor = createServer((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await new Promise<void>((r) => impostor.listen(socketPathFor(dir), r));
    try {
      expect(await code(connectHost(socketPathFor(dir), dir))).toBe('HOST_REFUSED');
      expect(await code(openShared({ location: dir, create: false, launch: inProcess }))).toBe(
        'HOST_REFUSED',
      );
      expect(hosts).toHaveLength(1); // the stopped one: no host was started over the impostor
    } finally {
      await new Promise((r) => impostor.close(r));
    }
  });

  it('a host of another memledger version: asked to stop when idle, refused when it serves others', async () => {
    const dir = newDir();
    const { mkdirSync, realpathSync } = await import('node:fs');
    mkdirSync(dir);
    for (const answer of [
      { id: 1, ok: true },
      { id: 1, ok: false, error: { message: 'serves 1 other process(es)' } },
    ]) {
      const asked: unknown[] = [];
      const older = createServer((socket) => {
        const reader = new FrameReader(1 << 20);
        socket.on('data', (chunk: Buffer) => {
          for (const m of reader.push(chunk)) {
            asked.push(m);
            writeFrame(socket, answer);
          }
        });
        writeFrame(socket, {
          protocol: 'memledger-store-host/1',
          dir: realpathSync(dir),
          pid: 4242,
        });
      });
      await new Promise<void>((r) => older.listen(socketPathFor(dir), r));
      try {
        const outcome = await connectHost(socketPathFor(dir), dir).catch((e: unknown) => e);
        expect(asked).toEqual([{ id: 1, op: 'yield' }]); // and nothing else was sent to it
        if (answer.ok) {
          expect(outcome).toBeNull(); // it stops: the caller starts a host of this version
        } else {
          expect((outcome as EngineError).code).toBe('HOST_REFUSED');
          expect((outcome as EngineError).message).toMatch(
            /process 4242.*another memledger version/,
          );
        }
      } finally {
        await new Promise((r) => older.close(r));
      }
    }
  });

  it('a host of another store, and a symlink to its socket', async () => {
    const dir = newDir();
    const other = newDir();
    await open(other);
    const { linkSync, mkdirSync, symlinkSync, unlinkSync } = await import('node:fs');
    mkdirSync(dir);
    // the other store's socket itself, linked where this store's would be: its hello names the
    // other store
    linkSync(socketPathFor(other), socketPathFor(dir));
    expect(await code(connectHost(socketPathFor(dir), dir))).toBe('HOST_REFUSED');
    // a symlink is no socket of ours either
    unlinkSync(socketPathFor(dir));
    symlinkSync(socketPathFor(other), socketPathFor(dir));
    expect(await code(connectHost(socketPathFor(dir), dir))).toBe('HOST_REFUSED');
    // negative control: the other store's own path is taken
    const ok = await connectHost(socketPathFor(other), other);
    expect(ok).not.toBeNull();
    ok?.close();
  });
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error('timed out');
}

/** Closes a listener but leaves its socket file, as a killed process does. */
async function closeKeepingFile(server: Server, path: string): Promise<void> {
  const { renameSync } = await import('node:fs');
  renameSync(path, `${path}.keep`);
  await new Promise((r) => server.close(r));
  renameSync(`${path}.keep`, path);
}
