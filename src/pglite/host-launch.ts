import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError, type ErrorCode } from '../domain/errors.js';
import { connectHost, HostClient, type Connection } from './host-client.js';
import { socketPathFor } from './host-protocol.js';

/** How long a client looks for a host (one being started by another process included). */
const FIND_HOST_MS = 30_000;
const POLL_MS = 25;

/**
 * Starts a host for the store `dir`; resolves once it listens (or once `waitMs` has passed: the
 * caller then looks for it), or throws why it did not.
 */
export type LaunchHost = (
  dir: string,
  create: boolean,
  idleMs: number | undefined,
  waitMs: number,
) => Promise<void>;

export interface SharedOpenOptions {
  /** The store's directory. */
  location: string;
  create: boolean;
  /** How long the host waits with no client before it stops (when this call starts it). */
  idleMs?: number;
  /** Starts a host; by default a detached `memledger` host process (`host-main.js`). */
  launch?: LaunchHost;
}

let launcher: LaunchHost | undefined;

/**
 * Test-only: how hosts are started when a caller names no `launch` (the unit tier runs from the
 * TypeScript sources, where there is no built host program, so it starts hosts in process).
 */
export function setHostLauncher(launch: LaunchHost | undefined): void {
  launcher = launch;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The store `location` through its host: connects to the host that serves it, or starts one and
 * connects. Two processes that start hosts at once both end up on the one that took the store's
 * lock; a store held by a process that does not share it is STORE_LOCKED.
 */
export async function openShared(options: SharedOpenOptions): Promise<HostClient> {
  const dir = resolve(options.location);
  const launch = options.launch ?? launcher ?? spawnHost;
  const find = (): Promise<Connection> => findHost(dir, options.create, options.idleMs, launch);
  return new HostClient(await find(), dir, find);
}

/**
 * Asks the idle host of the store `location` to stop, so this process can open the store itself;
 * true once the host has let the store go. False when there is no host to ask, or it serves other
 * processes (their work is not cut off).
 */
export async function yieldHost(location: string): Promise<boolean> {
  const dir = resolve(location);
  const pid = lockHolderHost(dir);
  if (pid === null) return false;
  const connection = await connectHost(socketPathFor(dir), dir).catch(() => null);
  if (connection === null) return false;
  try {
    await connection.send({ op: 'yield' });
  } catch {
    return false;
  } finally {
    connection.close();
  }
  const deadline = Date.now() + FIND_HOST_MS;
  while (lockHolderHost(dir) === pid && Date.now() < deadline) await sleep(POLL_MS);
  return lockHolderHost(dir) !== pid;
}

/** The live host holding the store's lock, read from the lock file; null when there is none. */
function lockHolderHost(dir: string): number | null {
  try {
    const owner = JSON.parse(readFileSync(join(dir, 'memledger.lock'), 'utf8')) as {
      pid?: unknown;
      host?: unknown;
      role?: unknown;
    };
    if (owner.role !== 'host' || owner.host !== hostname() || typeof owner.pid !== 'number') {
      return null;
    }
    return alive(owner.pid) ? owner.pid : null;
  } catch {
    return null;
  }
}

async function findHost(
  dir: string,
  create: boolean,
  idleMs: number | undefined,
  launch: LaunchHost,
): Promise<Connection> {
  if (!create && !existsSync(dir)) {
    throw new EngineError(
      'NOT_INITIALIZED',
      `no memledger store at ${dir}; create one (createEngine with create: true, or \`memledger init\`)`,
    );
  }
  const socketPath = socketPathFor(dir);
  const deadline = Date.now() + FIND_HOST_MS;
  for (;;) {
    const connection = await connectHost(socketPath, dir);
    if (connection !== null) return connection;
    // A host that holds the lock and does not answer yet (booting, busy, or stopping): waited
    // for, not raced by another start.
    const holder = lockHolderHost(dir);
    if (Date.now() > deadline) {
      throw new EngineError(
        'STORE_LOCKED',
        `no host of the store at ${dir} answered within ${FIND_HOST_MS / 1000} s` +
          (holder === null ? '' : ` (process ${holder} holds it)`),
        holder === null ? {} : { data: { pid: holder, role: 'host' } },
      );
    }
    if (holder !== null) {
      await sleep(POLL_MS);
      continue;
    }
    try {
      await launch(dir, create, idleMs, deadline - Date.now());
    } catch (err) {
      const data = err instanceof EngineError ? err.data : undefined;
      // another process's host won the lock: connect to it
      if (err instanceof EngineError && err.code === 'STORE_LOCKED' && data?.role === 'host') {
        await sleep(POLL_MS);
        continue;
      }
      throw err;
    }
  }
}

/** The host program beside this file (built); from the TypeScript sources there is none. */
function hostEntry(): string {
  const entry = fileURLToPath(new URL('./host-main.js', import.meta.url));
  if (!existsSync(entry)) {
    throw new EngineError(
      'DB_UNUSABLE',
      `a shared embedded store needs memledger built: ${entry} is missing (npm run build)`,
    );
  }
  return entry;
}

/**
 * Starts a detached host process for `dir` and waits for its one line on stdout: ready, or the
 * error that kept it from owning the store. The host then outlives this process, until idle.
 */
export const spawnHost: LaunchHost = async (dir, create, idleMs, waitMs) => {
  const args = [hostEntry(), dir];
  if (create) args.push('--create');
  if (idleMs !== undefined) args.push(`--idle-ms=${idleMs}`);
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: '/',
    env: hostEnv(),
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (t: string) => (out += t));
  child.stderr.setEncoding('utf8').on('data', (t: string) => (err = (err + t).slice(-2000)));
  const line = await new Promise<string | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), Math.max(waitMs, 0));
    const done = (): void => {
      clearTimeout(timer);
      resolve(out.split('\n')[0] ?? '');
    };
    child.stdout.on('data', () => {
      if (out.includes('\n')) done();
    });
    // 'close', not 'exit': stdout has been read to its end by then
    child.on('close', done);
    child.on('error', (e) => {
      err += e.message;
      done();
    });
  });
  child.stdout.destroy();
  child.stderr.destroy();
  child.unref();
  if (line === null) return; // still starting: the caller looks for its socket until its deadline
  let said: {
    ready?: true;
    error?: { code: string; message: string; data?: Record<string, unknown> };
  };
  try {
    said = JSON.parse(line) as typeof said;
  } catch {
    throw new EngineError(
      'DB_UNUSABLE',
      `the store host for ${dir} did not start${err.trim() === '' ? '' : `: ${err.trim()}`}`,
    );
  }
  if (said.ready === true) return;
  const e = said.error;
  throw new EngineError(
    (e?.code ?? 'DB_UNUSABLE') as ErrorCode,
    e?.message ?? `the store host for ${dir} did not start`,
    e?.data === undefined ? {} : { data: e.data },
  );
};

/**
 * What a host process is given of this process's environment: where things are, and the test
 * crash points; not the owner's passphrase, API keys or NODE_OPTIONS (a host outlives the command
 * that started it, and needs none of them).
 */
function hostEnv(): NodeJS.ProcessEnv {
  const keep = /^(PATH|HOME|TMPDIR|TZ|LANG|LC_[A-Z]+|MEMLEDGER_TEST_[A-Z_]+)$/;
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => keep.test(k)));
}
