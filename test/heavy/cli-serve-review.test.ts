// `memledger serve` as the owner runs it: the built CLI, a PostgreSQL store the test opens too,
// HOME in a temp dir. The review page at / finds the key file `init` wrote, unlocks with its
// passphrase, signs decisions and records their head beside the key file, as `decide` does.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createEngine,
  generateOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type FactId,
} from '../../src/index.js';
import { testStore, type TestStore } from '../support/engines.js';

const MAIN = resolve(import.meta.dirname, '../../dist/cli/main.js');
const PASSPHRASE = 'correct horse battery staple';
const tmp = mkdtempSync(join(tmpdir(), 'ml-serve-review-'));
const home = join(tmp, 'home');
const passphraseFile = join(tmp, 'passphrase');
writeFileSync(passphraseFile, `${PASSPHRASE}\n`);

/** The child's environment: HOME in the temp dir, and none of the caller's memledger settings. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  for (const name of Object.keys(env)) if (name.startsWith('MEMLEDGER_')) delete env[name];
  return env;
}

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

const children = new Set<ChildProcess>();

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((done) => child.once('exit', (code) => done(code)));
}

async function stopAll(): Promise<void> {
  const running = [...children];
  children.clear();
  await Promise.all(
    running.map(async (child) => {
      const exited = exitOf(child);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

afterEach(stopAll);

/** Runs `memledger …` to its end (killed after 30 s: a command that should fail but serves). */
function runCli(args: string[]): Promise<Finished> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGTERM'), 30_000);
  return new Promise((done) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      done({ code, stdout, stderr });
    }),
  );
}

/** The code of the JSON error a failed `--json` run printed last on stderr. */
function errorCode(stderr: string): string {
  const last = stderr.trim().split('\n').at(-1) ?? '';
  return (JSON.parse(last) as { error: { code: string } }).error.code;
}

interface Printed {
  url: string;
  mcp: string;
  port: number;
  review: { subject: string; keyFile: string | null };
}

interface Serving {
  child: ChildProcess;
  printed: Printed;
  stderr: () => string;
}

/** `memledger serve` that should refuse: it ends, or prints where it listens (and is stopped). */
interface Attempt {
  /** The line it printed on stdout, if it started serving. */
  line: string | null;
  code: number | null;
  stderr: string;
}

function spawnServe(db: string, args: string[]): ChildProcess {
  const child = spawn(
    process.execPath,
    [MAIN, 'serve', '--db', db, '--listen', '127.0.0.1:0', '--json', ...args],
    { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  return child;
}

/** Starts serve and waits for its first stdout line, or for it to end. */
async function attemptServe(
  db: string,
  args: string[],
): Promise<Attempt & { child: ChildProcess }> {
  const child = spawnServe(db, args);
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const closed = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  const line = await Promise.race([
    new Promise<string>((done) => {
      if (child.stdout !== null) createInterface({ input: child.stdout }).once('line', done);
    }),
    closed.then(() => null),
  ]);
  if (line !== null) return { child, line, code: null, stderr };
  children.delete(child);
  return { child, line, code: await closed, stderr };
}

/** Starts `memledger serve --db db --listen 127.0.0.1:0 --json …` and reads the line it prints. */
async function serve(db: string, args: string[] = []): Promise<Serving> {
  const { child, line, stderr } = await attemptServe(db, args);
  if (line === null) throw new Error(`serve exited before printing: ${stderr}`);
  let more = stderr;
  child.stderr?.on('data', (c: Buffer) => (more += c.toString('utf8')));
  return { child, printed: JSON.parse(line) as Printed, stderr: () => more };
}

/** A browser's session, by hand: cookies kept from each answer, no redirect followed. */
class Browser {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly base: string) {}

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  async request(
    path: string,
    form?: Record<string, string>,
  ): Promise<{ status: number; location: string | null; body: string }> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) {
      headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    }
    if (form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(new URL(path, this.base), {
      method: form === undefined ? 'GET' : 'POST',
      headers,
      redirect: 'manual',
      ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() }),
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair = ''] = set.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return { status: res.status, location: res.headers.get('location'), body: await res.text() };
  }

  /** GET `path` and the CSRF token its forms carry. */
  async page(path = '/'): Promise<{ status: number; body: string; csrf: string }> {
    const res = await this.request(path);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
    return { status: res.status, body: res.body, csrf };
  }

  async unlock(
    passphrase: string,
  ): Promise<{ status: number; location: string | null; body: string }> {
    const { csrf } = await this.page('/');
    expect(csrf).not.toBe('');
    return this.request('/unlock', { _csrf: csrf, passphrase });
  }
}

/** A proposal waiting in `subject`'s pile, made through the engine while serve runs. */
async function propose(engine: Engine, subject: string, text: string): Promise<string> {
  const me = engine.subject(subject);
  const session = await me.sessions.create();
  await me.turns.add({ sessionId: session.id, role: 'user', content: `I drink ${text} daily.` });
  const result = await me.gate.propose({
    sessionId: session.id,
    proposals: [
      {
        slot: 'what_i_know_about_user',
        text: `The user drinks ${text} daily.`,
        origin: 'saw',
        evidence: { turn: 1, quote: `drink ${text} daily` },
      },
    ],
  });
  expect(result.dropped).toEqual([]);
  const id = result.proposed[0]?.id;
  if (id === undefined) throw new Error('nothing proposed');
  return id;
}

const store: TestStore = testStore('postgres');
let engine: Engine;
let keyFile: string;

beforeAll(async () => {
  const init = await runCli([
    'init',
    '--db',
    store.db,
    '--passphrase-file',
    passphraseFile,
    '--json',
  ]);
  expect(init.code, init.stderr).toBe(0);
  const doc = JSON.parse(init.stdout) as { ownerKey: { keyFile: string; created: boolean } };
  expect(doc.ownerKey.created).toBe(true);
  keyFile = doc.ownerKey.keyFile;
  expect(keyFile).toBe(join(home, '.config', 'memledger', 'owner-owner.key'));
  engine = await createEngine({ db: store.db });
  // a subject the store holds without an owner key
  await engine.subjects.create('nobody');
});

afterAll(async () => {
  await stopAll();
  await engine?.close();
  await store.cleanup();
  rmSync(tmp, { recursive: true, force: true });
});

describe('memledger serve: the review page, wired by the CLI [postgres]', () => {
  it('prints one JSON line naming the review subject and the key file init wrote', async () => {
    const { child, printed } = await serve(store.db);
    expect(printed.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(printed.mcp).toBe(`${printed.url}mcp`);
    expect(printed.review).toEqual({ subject: 'owner', keyFile });
    const exited = exitOf(child);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('unlocks with the passphrase, approves a proposal, and records the signed head', async () => {
    const { printed } = await serve(store.db);
    const browser = new Browser(printed.url);
    const locked = await browser.page('/');
    expect(locked.status).toBe(200);
    expect(locked.body).toContain('Unlock the review page');
    const before = browser.cookie('memledger_review');
    expect(before).toBeDefined();

    // negative control: a wrong passphrase opens nothing
    const wrong = await browser.unlock('not the passphrase');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('BAD_PASSPHRASE');

    const unlocked = await browser.unlock(PASSPHRASE);
    expect(unlocked.status).toBe(303);
    expect(unlocked.location).toBe('/');
    expect(browser.cookie('memledger_review')).not.toBe(before);

    const id = await propose(engine, 'owner', 'green tea');
    const pile = await browser.page('/');
    expect(pile.body).toContain('The user drinks green tea daily.');
    expect(pile.body).toContain(`data-proposal="${id}"`);

    const headFile = `${keyFile}.heads.json`;
    expect(existsSync(headFile)).toBe(false);
    const approved = await browser.request(`/pile/${encodeURIComponent(id)}/approve`, {
      _csrf: pile.csrf,
      confirm: 'YES',
    });
    expect(approved.status, approved.body).toBe(303);
    const after = await browser.page('/');
    const seq = Number(/decision #(\d+), signed/.exec(after.body)?.[1]);
    expect(seq).toBeGreaterThanOrEqual(1);
    expect((await engine.subject('owner').facts.get(id as FactId)).status).toBe('active');

    const heads = JSON.parse(readFileSync(headFile, 'utf8')) as {
      v: number;
      heads: Record<string, { seq: number; hash: string }>;
    };
    expect(heads.v).toBe(1);
    const entries = Object.entries(heads.heads);
    expect(entries).toHaveLength(1);
    const [entryKey, entry] = entries[0] ?? ['', { seq: 0, hash: '' }];
    expect(entryKey).toMatch(/\/owner$/);
    expect(entry.seq).toBe(seq);

    const verify = await runCli(['chain', 'verify', '--db', store.db, '--json']);
    expect(verify.code, verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({
      ok: true,
      length: seq,
      headHash: entry.hash,
      signedHead: { seq, hash: entry.hash },
      anchored: true,
      anchor: { keyFile },
    });

    const chain = await browser.page('/chain');
    expect(chain.status).toBe(200);
    expect(chain.body).toContain(`chain ok: ${seq} decisions`);
    expect(chain.body).toContain('anchored');
    expect(chain.body).not.toContain('NOT anchored');
    expect(chain.body).toContain(`signed head: link ${seq}`);
  });

  it('refuses an explicit --key holding another key before starting: WRONG_KEY', async () => {
    const other = join(tmp, 'other.key');
    writeOwnerKeyFile(other, generateOwnerKey(PASSPHRASE).keyFile);
    // as `decide` refuses it: the store names the key it is anchored by
    const r = await attemptServe(store.db, ['--key', other]);
    expect(r.line, 'serve started').toBeNull();
    expect(r.code).toBe(1);
    expect(errorCode(r.stderr)).toBe('WRONG_KEY');
  });

  it('starts for a subject without an owner key, and says the page cannot be unlocked', async () => {
    const { printed } = await serve(store.db, ['--subject', 'nobody']);
    expect(printed.review).toEqual({ subject: 'nobody', keyFile: null });
    const browser = new Browser(printed.url);
    const page = await browser.page('/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('This page cannot be unlocked');
    expect(page.body).toContain('subject &quot;nobody&quot; has no owner key');
    expect(page.body).not.toContain('action="/unlock"');
  });

  it('starts on a store made without init, whose page cannot be unlocked', async () => {
    const bare = testStore('postgres');
    try {
      await (await createEngine({ db: bare.db })).close();
      const { printed } = await serve(bare.db);
      expect(printed.review).toEqual({ subject: 'owner', keyFile: null });
      const page = await new Browser(printed.url).page('/');
      expect(page.body).toContain('This page cannot be unlocked');
    } finally {
      await stopAll();
      await bare.cleanup();
    }
  });

  it('refuses --idle-lock 0 before starting anything', async () => {
    const r = await attemptServe(store.db, ['--idle-lock', '0']);
    expect(r.line, 'serve started').toBeNull();
    expect(r.code).toBe(2);
    expect(errorCode(r.stderr)).toBe('INVALID_ARGUMENT');
  });

  it('shows the --idle-lock minutes on the unlock form', async () => {
    const { printed } = await serve(store.db, ['--idle-lock', '3']);
    const page = await new Browser(printed.url).page('/');
    expect(page.body).toMatch(/for\s+3\s+minutes\s+without a request/);
  });

  // 35,792 minutes and more is past setTimeout's 2^31-1 ms: Node fires such a timer after 1 ms,
  // so an idle lock meant to last weeks would forget the key at once. Refused or kept, not that.
  // a timer over 2^31 - 1 ms fires at once: a long idle lock would forget the key at once
  it('refuses an --idle-lock over a day before starting', async () => {
    const r = await attemptServe(store.db, ['--idle-lock', '40000']);
    expect(r.line, 'serve started').toBeNull();
    expect(r.code).toBe(2);
    expect(errorCode(r.stderr)).toBe('INVALID_ARGUMENT');
  });

  it('refuses a malformed --subject id before starting, as every other command does', async () => {
    const r = await attemptServe(store.db, ['--subject', 'bad id!']);
    expect(r.line, 'serve started').toBeNull();
    expect(r.code).toBe(2);
    expect(errorCode(r.stderr)).toBe('INVALID_ARGUMENT');
  });

  it('refuses a --subject that does not exist before starting: SUBJECT_NOT_FOUND', async () => {
    const r = await attemptServe(store.db, ['--subject', 'onwer']);
    expect(r.line, 'serve started').toBeNull();
    expect(errorCode(r.stderr)).toBe('SUBJECT_NOT_FOUND');
  });
});

describe('memledger serve --notify-url [postgres]', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  /** A receiver on 127.0.0.1 that records every body posted to it. */
  async function receiver(): Promise<{ port: number; bodies: string[] }> {
    const bodies: string[] = [];
    const sockets = new Set<Socket>();
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(204).end();
      });
    });
    server.on('connection', (s: Socket) => sockets.add(s));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    closers.push(
      () =>
        new Promise<void>((done) => {
          for (const s of sockets) s.destroy();
          server.close(() => done());
        }),
    );
    return { port: (server.address() as AddressInfo).port, bodies };
  }

  it('refuses a host that is neither loopback nor --allow, before binding', async () => {
    const r = await attemptServe(store.db, ['--notify-url', 'http://example.com/x']);
    expect(r.line, 'serve started').toBeNull();
    expect(r.code).toBe(1);
    expect(errorCode(r.stderr)).toBe('NOTIFY_HOST_NOT_ALLOWED');
  });

  it('refuses a URL that is not http or https as bad input', async () => {
    const r = await attemptServe(store.db, ['--notify-url', 'ftp://127.0.0.1/']);
    expect(r.line, 'serve started').toBeNull();
    expect(r.code).toBe(2);
    expect(errorCode(r.stderr)).toBe('INVALID_ARGUMENT');
  });

  it('takes a host named by --allow (an empty pile sends nothing)', async () => {
    const { printed } = await serve(store.db, [
      '--subject',
      'nobody',
      '--notify-url',
      'http://example.com/x',
      '--allow',
      'example.com',
    ]);
    expect(printed.review.subject).toBe('nobody');
  });

  it('sends one notice to a loopback receiver when it starts with a full pile', async () => {
    // The notifier looks at start and then every 30 s, a default the CLI cannot shorten: the
    // pile is filled before serve starts, so the first look sends.
    await engine.subjects.create('noticed');
    await propose(engine, 'noticed', 'black coffee');
    const r = await receiver();
    const { printed } = await serve(store.db, [
      '--subject',
      'noticed',
      '--notify-url',
      `http://127.0.0.1:${r.port}/notice`,
    ]);
    const deadline = Date.now() + 10_000;
    while (r.bodies.length === 0 && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 50));
    }
    await new Promise((done) => setTimeout(done, 500));
    expect(r.bodies).toHaveLength(1);
    expect(JSON.parse(r.bodies[0] ?? '')).toMatchObject({
      type: 'memledger.pile',
      subject: 'noticed',
      pending: 1,
      reviewUrl: printed.url,
    });
    expect(r.bodies[0]).not.toContain('black coffee');
  });
});
