// Issue 12, problem 4: the stale-lock takeover read, unlinked and recreated the lock in separate steps, so processes racing for a dead owner's lock both won, and two writers on one PGlite directory lost acknowledged turns; an empty lock file meant STORE_LOCKED forever.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, EngineError } from '../../../src/index.js';
import { DirLock, takeoverMarkerFor } from '../../../src/pglite/dir-lock.js';

const RACER = resolve(import.meta.dirname, '../../support/lock-racer.mjs');
const DIST_LOCK = resolve(import.meta.dirname, '../../../dist/src/pglite/dir-lock.js');
const tmpRoot = mkdtempSync(join(tmpdir(), 'memledger-lock-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

interface Doc {
  pid: number;
  ready?: boolean;
  won?: boolean;
  nonce?: string;
  opened?: boolean;
  done?: boolean;
  written?: boolean;
  ack?: { seq: number | null; content: string };
  error?: { code: string; message: string; data: Record<string, unknown> | null };
}

/** One lock-racer.mjs child: its JSON lines, and stdin to say "go" and, by closing it, "exit". */
class Child {
  readonly docs: Doc[] = [];
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly exited: Promise<number | null>;
  private wake: () => void = () => undefined;

  constructor(args: string[]) {
    this.proc = spawn(process.execPath, [RACER, ...args], { stdio: 'pipe' });
    this.proc.stderr.on('data', (d: Buffer) => process.stderr.write(d));
    createInterface({ input: this.proc.stdout }).on('line', (line) => {
      this.docs.push(JSON.parse(line) as Doc);
      this.wake();
    });
    this.exited = new Promise((res) => this.proc.once('exit', (code) => res(code)));
    void this.exited.then(() => this.wake());
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  async until(pred: (d: Doc) => boolean): Promise<Doc> {
    for (;;) {
      const found = this.docs.find(pred);
      if (found !== undefined) return found;
      if (this.proc.exitCode !== null) {
        throw new EngineError('INTERNAL', `child ${this.pid} exited: ${JSON.stringify(this.docs)}`);
      }
      await new Promise<void>((res) => (this.wake = res));
    }
  }

  go(): void {
    this.proc.stdin.write('go\n');
  }

  async end(): Promise<number | null> {
    this.proc.stdin.end();
    return this.exited;
  }
}

/** The pid of a process that has exited: the owner of a lock left behind by a crash. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(r.stdout);
}

function lockIn(name: string): { dir: string; lockFile: string } {
  const dir = mkdtempSync(join(tmpRoot, `${name}-`));
  return { dir, lockFile: join(dir, 'memledger.lock') };
}

/** Writes a lock file as a crash would leave it, aged past any grace period. */
function leaveLock(lockFile: string, content: string): void {
  writeFileSync(lockFile, content);
  const old = new Date(Date.now() - 60_000);
  utimesSync(lockFile, old, old);
}

/** Races `n` processes for the lock at once; returns how many won, after checking the file. */
async function race(dir: string, lockFile: string, n: number): Promise<number> {
  const racers = Array.from({ length: n }, () => new Child(['race', lockFile, dir]));
  try {
    await Promise.all(racers.map((r) => r.until((d) => d.ready === true)));
    for (const r of racers) r.go();
    const results = await Promise.all(racers.map((r) => r.until((d) => d.won !== undefined)));
    const winners = results.filter((d) => d.won === true);
    if (winners.length === 1) {
      const winner = winners[0]!;
      const onDisk = JSON.parse(readFileSync(lockFile, 'utf8')) as { pid: number; nonce: string };
      expect(onDisk).toMatchObject({ pid: winner.pid, nonce: winner.nonce, host: hostname() });
      expect(readdirSync(dir)).toEqual(['memledger.lock']);
      for (const loser of results.filter((d) => d.won === false)) {
        expect(loser.error).toMatchObject({ code: 'STORE_LOCKED', data: { pid: winner.pid } });
      }
    }
    return winners.length;
  } finally {
    await Promise.all(racers.map((r) => r.end()));
  }
}

async function lockedError(lockFile: string, dir: string): Promise<EngineError> {
  try {
    const lock = await DirLock.acquire(lockFile, dir);
    lock.release();
  } catch (err) {
    if (err instanceof EngineError) return err;
    throw err;
  }
  throw new EngineError('INTERNAL', 'the lock was taken: expected STORE_LOCKED');
}

beforeAll(() => {
  // child processes run the compiled lock; `npm test` builds dist/ before vitest starts
  expect(existsSync(DIST_LOCK), `${DIST_LOCK} is missing: run npm run build`).toBe(true);
});

describe('the lock on an embedded store [pglite]', () => {
  it('gives a dead owner’s lock to exactly one of 3 racing processes, in each of 25 rounds', async () => {
    const dead = deadPid();
    const winnersPerRound: number[] = [];
    for (let round = 0; round < 25; round++) {
      const { dir, lockFile } = lockIn(`race-${round}`);
      const since = new Date(Date.now() - 3_600_000).toISOString();
      leaveLock(
        lockFile,
        JSON.stringify({ pid: dead, host: hostname(), since, nonce: `r${round}` }),
      );
      winnersPerRound.push(await race(dir, lockFile, 3));
      // the winner released its lock on exit, and no temp file or takeover marker is left
      expect(readdirSync(dir)).toEqual([]);
    }
    console.log(
      `lock race: 25 rounds x 3 processes, winners per round: ${winnersPerRound.join(',')}`,
    );
    expect(winnersPerRound).toEqual(Array<number>(25).fill(1));
  }, 120_000);

  it('takes over an empty or corrupt lock file left by a crash, one winner each time', async () => {
    const leftovers = [
      '',
      '{"pid":',
      JSON.stringify({ pid: 0, host: hostname(), since: 'then' }),
      JSON.stringify({ host: hostname() }),
      '\u0000\u0000\u0000\u0000',
    ];
    const winners: number[] = [];
    for (const [i, content] of leftovers.entries()) {
      const { dir, lockFile } = lockIn(`corrupt-${i}`);
      leaveLock(lockFile, content);
      winners.push(await race(dir, lockFile, 3));
    }
    console.log(`corrupt/empty lock race: 5 kinds x 3 processes, winners: ${winners.join(',')}`);
    expect(winners).toEqual([1, 1, 1, 1, 1]);
  }, 60_000);

  it('recovers when a process died in the middle of a takeover, leaving its marker', async () => {
    const dead = deadPid();
    const winners: number[] = [];
    for (let round = 0; round < 3; round++) {
      const { dir, lockFile } = lockIn(`half-taken-${round}`);
      leaveLock(lockFile, JSON.stringify({ pid: dead, host: hostname(), since: 'then' }));
      const marker = takeoverMarkerFor(lockFile)!;
      leaveLock(marker, JSON.stringify({ pid: dead, host: hostname(), since: 'mid-takeover' }));
      winners.push(await race(dir, lockFile, 3));
      expect(readdirSync(dir)).toEqual([]);
    }
    expect(winners).toEqual([1, 1, 1]);
  }, 60_000);

  it('takes over a lock file that stays empty past the grace period, but not one being written', async () => {
    const fresh = lockIn('fresh-empty');
    writeFileSync(fresh.lockFile, ''); // just now: not stale until the grace period has passed
    const lock = await DirLock.acquire(fresh.lockFile, fresh.dir);
    expect(JSON.parse(readFileSync(fresh.lockFile, 'utf8'))).toMatchObject({
      pid: process.pid,
      nonce: lock.owner.nonce,
    });
    lock.release();
    expect(existsSync(fresh.lockFile)).toBe(false);

    // negative control: a writer that creates the file and fills it a moment later keeps its lock
    const writing = lockIn('being-written');
    const writer = new Child(['write-late', writing.lockFile, '200']);
    try {
      await writer.until((d) => d.ready === true);
      const err = await lockedError(writing.lockFile, writing.dir);
      expect(err.code).toBe('STORE_LOCKED');
      expect(err.data).toMatchObject({ pid: writer.pid, host: hostname() });
      expect(JSON.parse(readFileSync(writing.lockFile, 'utf8'))).toMatchObject({ pid: writer.pid });
    } finally {
      await writer.end();
    }
  });

  it('names a live holder, and the file to delete, in STORE_LOCKED; release removes only its own lock', async () => {
    const { dir, lockFile } = lockIn('held');
    const holder = new Child(['hold', lockFile, dir]);
    try {
      expect(await holder.until((d) => d.won !== undefined)).toMatchObject({ won: true });
      const onDisk = JSON.parse(readFileSync(lockFile, 'utf8')) as { since: string };
      const err = await lockedError(lockFile, dir);
      expect(err.code).toBe('STORE_LOCKED');
      expect(err.data).toEqual({
        lockFile,
        pid: holder.pid,
        host: hostname(),
        since: onDisk.since,
      });
      expect(err.message).toContain(`process ${holder.pid} on ${hostname()} since ${onDisk.since}`);
      expect(err.message).toContain(`delete ${lockFile}`);
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: holder.pid });
    } finally {
      expect(await holder.end()).toBe(0);
    }
    expect(existsSync(lockFile)).toBe(false); // the holder released its own lock on exit

    // this process twice: the second open is refused and says so
    const mine = await DirLock.acquire(lockFile, dir);
    const twice = await lockedError(lockFile, dir);
    expect(twice.message).toContain('(this process');
    // a lock that is no longer ours (another nonce) is left alone by release
    const theirs = { pid: process.pid, host: hostname(), since: 'later', nonce: 'someone-else' };
    writeFileSync(lockFile, JSON.stringify(theirs));
    mine.release();
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toEqual(theirs);
    rmSync(lockFile);

    // a holder on another host cannot be checked from here: refused, saying so
    leaveLock(lockFile, JSON.stringify({ pid: 1, host: 'elsewhere.invalid', since: 'then' }));
    const foreign = await lockedError(lockFile, dir);
    expect(foreign.data).toMatchObject({ pid: 1, host: 'elsewhere.invalid' });
    expect(foreign.message).toContain('another host');
    expect(foreign.message).toContain(`delete ${lockFile}`);
  });

  it('lets one of two processes open a store; the other gets STORE_LOCKED and no acknowledged turn is lost', async () => {
    const dir = join(tmpRoot, 'engine-store');
    const setup = await createEngine({ db: dir });
    await setup.subjects.create();
    await setup.subject().sessions.create({ id: 'w' });
    await setup.close();

    const [a, b] = [
      new Child(['engine', dir, 'w', 'a', '15']),
      new Child(['engine', dir, 'w', 'b', '15']),
    ];
    await Promise.all([a, b].map((c) => c.until((d) => d.ready === true)));
    a.go();
    b.go();
    const opened = await Promise.all([a, b].map((c) => c.until((d) => d.opened !== undefined)));
    expect(opened.filter((d) => d.opened === true)).toHaveLength(1);
    const winner = opened[0]!.opened === true ? a : b;
    const loser = winner === a ? b : a;
    const refused = opened.find((d) => d.opened === false)!;
    expect(refused.error).toMatchObject({ code: 'STORE_LOCKED', data: { pid: winner.pid } });
    expect(refused.error?.message).toContain(join(dir, 'memledger.lock'));
    await winner.until((d) => d.done === true);

    // a third process while the first still holds the store
    const third = new Child(['engine', dir, 'w', 'c', '5']);
    await third.until((d) => d.ready === true);
    third.go();
    expect(await third.until((d) => d.opened !== undefined)).toMatchObject({
      opened: false,
      error: { code: 'STORE_LOCKED', data: { pid: winner.pid } },
    });
    await third.end();
    expect(await winner.end()).toBe(0);
    await loser.end();

    // once the holder has closed, the next process opens it and writes
    const next = new Child(['engine', dir, 'w', 'd', '15']);
    await next.until((d) => d.ready === true);
    next.go();
    expect(await next.until((d) => d.opened !== undefined)).toMatchObject({ opened: true });
    await next.until((d) => d.done === true);
    expect(await next.end()).toBe(0);

    const acks = [...winner.docs, ...next.docs].flatMap((d) => (d.ack ? [d.ack] : []));
    expect(acks).toHaveLength(30);
    const reader = await createEngine({ db: dir, create: false });
    try {
      const turns = await reader.subject().history.turns('w');
      expect(turns.map((t) => t.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      const stored = turns.map((t) => ({ seq: t.seq, content: t.content }));
      expect(stored).toEqual(acks);
    } finally {
      await reader.close();
    }
  }, 120_000);
});
