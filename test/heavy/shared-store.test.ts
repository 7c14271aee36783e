// [pglite] One embedded store shared by many processes through its host (src/pglite/store-host.ts),
// with the built program: writers at once, the host killed mid-write, would-be hosts racing, and
// the CLI beside them. The protocol and isolation in process: test/store-host.test.ts. The Claude
// Code setup (mcp, hooks and the CLI at once): test/heavy/integrations-doc.test.ts.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILT_CLI, ENV_WITHOUT_MEMLEDGER } from '../support/cli.js';

const WRITER = resolve(import.meta.dirname, '../support/shared-writer.mjs');
const HOST_MAIN = resolve(import.meta.dirname, '../../dist/src/pglite/host-main.js');
const tmp = mkdtempSync(join(tmpdir(), 'ml-shared-'));
const env = {
  ...ENV_WITHOUT_MEMLEDGER,
  HOME: join(tmp, 'home'),
  MEMLEDGER_OWNER_PASSPHRASE: 'correct horse battery staple',
  MEMLEDGER_OWNER_KEY: join(tmp, 'owner.key'),
  // hosts these tests start stop soon after their last client
  MEMLEDGER_HOST_IDLE_SECONDS: '3',
};

afterAll(() => {
  for (const dir of stores) stopHost(dir);
  rmSync(tmp, { recursive: true, force: true });
});

const stores: string[] = [];

function cli(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BUILT_CLI, ...args], { encoding: 'utf8', env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function newStore(name: string): string {
  const dir = join(tmp, name);
  stores.push(dir);
  const made = cli(['init', '--db', dir, '--json']);
  expect(made.code, made.stderr).toBe(0);
  return dir;
}

/** The pid the store's lock names (its host's, while one runs). */
function lockPid(dir: string): number | null {
  try {
    return (JSON.parse(readFileSync(join(dir, 'memledger.lock'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitDead(pid: number): Promise<void> {
  for (let i = 0; i < 400 && alive(pid); i++) await new Promise((r) => setTimeout(r, 25));
  expect(alive(pid), `process ${pid} still runs`).toBe(false);
}

function stopHost(dir: string): void {
  const pid = lockPid(dir);
  if (pid !== null && alive(pid)) process.kill(pid, 'SIGTERM');
}

interface WriterDoc {
  ack?: string;
  hostPid?: number;
  error?: { code: string; message: string };
  done?: boolean;
}

/** Runs one shared-writer.mjs; `onDoc` sees each line as it comes. */
function writer(
  dir: string,
  session: string,
  label: string,
  count: number,
  onDoc: (doc: WriterDoc) => void = () => undefined,
): Promise<WriterDoc[]> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [WRITER, dir, session, label, String(count)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const docs: WriterDoc[] = [];
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const doc = JSON.parse(line) as WriterDoc;
      docs.push(doc);
      onDoc(doc);
    });
    child.on('error', fail);
    child.on('close', (code) => {
      if (code !== 0) fail(new Error(`writer ${label} exited ${code}: ${stderr}`));
      else done(docs);
    });
  });
}

function historyContents(dir: string, session: string): string[] {
  const r = cli(['history', '--db', dir, '--session', session, '--format', 'json', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { turns: Array<{ content: string }> }).turns.map(
    (t) => t.content,
  );
}

describe('[pglite] one embedded store, many processes', () => {
  it('8 processes write at once through one host: every acknowledged turn is there, once', async () => {
    const dir = newStore('eight');
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, w) => writer(dir, `s${w % 2}`, `w${w}`, 40)),
    );
    const acked = runs.flat().flatMap((d) => (d.ack === undefined ? [] : [d.ack]));
    const errors = runs.flat().filter((d) => d.error !== undefined);
    expect(errors).toEqual([]);
    expect(acked).toHaveLength(320);
    // one host served them all
    expect(
      new Set(runs.flat().flatMap((d) => (d.hostPid === undefined ? [] : [d.hostPid]))).size,
    ).toBe(1);
    const found = [...historyContents(dir, 's0'), ...historyContents(dir, 's1')];
    expect(found.sort()).toEqual([...acked].sort());
    // and a command beside them: the CLI reaches the same host
    const add = cli([
      'turn',
      'add',
      '--db',
      dir,
      '--session',
      's0',
      '--role',
      'user',
      '--text',
      'from the CLI',
      '--json',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(historyContents(dir, 's0')).toContain('from the CLI');
  });

  it('a host killed with SIGKILL mid-write, 25 rounds: no acknowledged turn lost, the next command works', async () => {
    const dir = newStore('killed');
    const acked: string[] = [];
    let kills = 0;
    for (let round = 0; round < 25; round++) {
      let killed = false;
      const onDoc = (doc: WriterDoc): void => {
        // kill the host after a few acknowledged writes of this round, while writers go on
        if (!killed && doc.ack !== undefined && doc.ack.endsWith(' 3') && doc.hostPid) {
          killed = true;
          process.kill(doc.hostPid, 'SIGKILL');
          kills++;
        }
      };
      const runs = await Promise.all([
        writer(dir, 'k', `r${round}a`, 12, onDoc),
        writer(dir, 'k', `r${round}b`, 12, onDoc),
      ]);
      for (const d of runs.flat()) if (d.ack !== undefined) acked.push(d.ack);
      for (const d of runs.flat()) {
        if (d.error !== undefined) expect(['HOST_LOST', 'STORE_ERROR']).toContain(d.error.code);
      }
    }
    expect(kills).toBe(25);
    const found = historyContents(dir, 'k');
    const missing = acked.filter((a) => !found.includes(a));
    expect(missing).toEqual([]);
    // nothing written twice
    expect(new Set(found).size).toBe(found.length);
    const next = cli([
      'turn',
      'add',
      '--db',
      dir,
      '--session',
      'k',
      '--role',
      'user',
      '--text',
      'after',
      '--json',
    ]);
    expect(next.code, next.stderr).toBe(0);
  }, 600_000);

  it('two would-be hosts racing, 25 rounds: exactly one hosts, the other is told who does', async () => {
    const dir = newStore('race');
    stopHost(dir);
    const pid = lockPid(dir);
    if (pid !== null) await waitDead(pid);
    for (let round = 0; round < 25; round++) {
      const start = (): Promise<{ line: string; pid: number }> =>
        new Promise((done) => {
          const child = spawn(process.execPath, [HOST_MAIN, dir, '--idle-ms=60000'], {
            env,
            stdio: ['ignore', 'pipe', 'ignore'],
            detached: true,
          });
          let out = '';
          child.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            if (out.includes('\n')) {
              child.stdout.destroy();
              child.unref();
              done({ line: out.split('\n')[0] ?? '', pid: child.pid ?? 0 });
            }
          });
        });
      const [a, b] = await Promise.all([start(), start()]);
      const said = [a, b].map(
        (r) =>
          JSON.parse(r.line) as {
            ready?: true;
            error?: { code: string; data?: { role?: string; pid?: number } };
          },
      );
      const winners = [a, b].filter((_, i) => said[i]?.ready === true);
      expect(winners, JSON.stringify(said)).toHaveLength(1);
      const loser = said.find((s) => s.ready !== true);
      expect(loser?.error).toMatchObject({
        code: 'STORE_LOCKED',
        data: { role: 'host', pid: winners[0]?.pid },
      });
      // a command finds the winner
      const r = cli(['session', 'list', '--db', dir, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const winner = winners[0]?.pid ?? 0;
      process.kill(winner, 'SIGTERM');
      await waitDead(winner);
      expect(existsSync(join(dir, 'memledger.sock'))).toBe(false);
    }
  }, 600_000);
});
