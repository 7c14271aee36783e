import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError, type ErrorCode } from '../domain/errors.js';
import { connectHost, HostClient, type Connection } from './host-client.js';
import { socketPathFor } from './host-protocol.js';

/** How long a client looks for a host (one being started by another process included). */
const FIND_HOST_MS = 30_000;
const POLL_MS = 25;

/** Starts a host for the store `dir`; resolves once it listens, or throws why it did not. */
export type LaunchHost = (
  dir: string,
  create: boolean,
  idleMs: number | undefined,
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

async function findHost(
  dir: string,
  create: boolean,
  idleMs: number | undefined,
  launch: LaunchHost,
): Promise<Connection> {
  const socketPath = socketPathFor(dir);
  const deadline = Date.now() + FIND_HOST_MS;
  // A host that holds the lock and is not listening yet (booting, or stopping): waited for.
  let starting: number | null = null;
  for (;;) {
    const connection = await connectHost(socketPath, dir);
    if (connection !== null) return connection;
    if (Date.now() > deadline) {
      throw new EngineError(
        'STORE_LOCKED',
        `no host of the store at ${dir} answered within ${FIND_HOST_MS / 1000} s` +
          (starting === null ? '' : ` (process ${starting} holds it)`),
        starting === null ? {} : { data: { pid: starting } },
      );
    }
    if (starting !== null && alive(starting)) {
      await sleep(POLL_MS);
      continue;
    }
    starting = null;
    try {
      await launch(dir, create, idleMs);
    } catch (err) {
      const data = err instanceof EngineError ? err.data : undefined;
      if (err instanceof EngineError && err.code === 'STORE_LOCKED' && data?.role === 'host') {
        starting = typeof data.pid === 'number' ? data.pid : null;
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
export const spawnHost: LaunchHost = async (dir, create, idleMs) => {
  const args = [hostEntry(), dir];
  if (create) args.push('--create');
  if (idleMs !== undefined) args.push(`--idle-ms=${idleMs}`);
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: '/',
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (t: string) => (out += t));
  child.stderr.setEncoding('utf8').on('data', (t: string) => (err = (err + t).slice(-2000)));
  const line = await new Promise<string>((resolve) => {
    const done = (): void => resolve(out.split('\n')[0] ?? '');
    child.stdout.on('data', () => {
      if (out.includes('\n')) done();
    });
    child.on('exit', done);
    child.on('error', (e) => {
      err += e.message;
      done();
    });
  });
  child.stdout.destroy();
  child.stderr.destroy();
  child.unref();
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
