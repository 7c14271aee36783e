/**
 * `memledger serve` in a child process of its own, so the load generator never shares the
 * server's event loop. The child is stopped by `stop()` (SIGTERM, then SIGKILL if it lingers),
 * and killed with SIGKILL when this process exits any other way (an error, Ctrl-C, SIGTERM).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BenchError } from './bench-error.js';

const CLI = fileURLToPath(new URL('../../cli/main.js', import.meta.url));
const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;

const running = new Set<ChildProcess>();
const onInterrupt = new Set<() => Promise<void>>();
let hooked = false;
/** The longest an interrupted run waits for its clean-ups (dropping a schema) before it exits. */
const INTERRUPT_CLEANUP_MS = 10_000;

/**
 * Runs `fn` if the run is interrupted (SIGINT, SIGTERM, SIGHUP) while it is registered, after
 * the children are killed; returns the function that unregisters it.
 */
export function atInterrupt(fn: () => Promise<void>): () => void {
  hookExit();
  onInterrupt.add(fn);
  return () => onInterrupt.delete(fn);
}

/** Kills every child still running; synchronous, so it also works from an `exit` handler. */
function killAll(): void {
  for (const c of running) c.kill('SIGKILL');
  running.clear();
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll();
      const code = signal === 'SIGINT' ? 130 : 143;
      const cleanups = [...onInterrupt].map((fn) => fn().catch(() => undefined));
      const cap = new Promise((resolve) => setTimeout(resolve, INTERRUPT_CLEANUP_MS).unref());
      void Promise.race([Promise.all(cleanups), cap]).then(() => process.exit(code));
    });
  }
}

export interface ServerChild {
  /** The base URL the child printed, e.g. `http://127.0.0.1:40123/`. */
  url: string;
  pid: number;
  /** The last of what the child wrote on stderr (its internal-error lines). */
  stderr(): string;
  /** Stops the child and waits for it to exit. */
  stop(): Promise<void>;
}

/** Starts `memledger serve --db <db> --listen 127.0.0.1:0 --json` and waits for its URL. */
export function startServerChild(db: string): Promise<ServerChild> {
  hookExit();
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--db', db, '--listen', '127.0.0.1:0', '--json'],
    // an embedded store's host (which serve starts) stops soon after serve does, not in minutes
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, MEMLEDGER_HOST_IDLE_SECONDS: '2' },
    },
  );
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  let served = false;
  let onEarlyExit: (why: string) => void = () => undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      if (!served) onEarlyExit(`exited ${code ?? signal ?? '?'} before it served`);
      resolve();
    }),
  );
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const fail = (why: string): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      const last = stderr.trim().split('\n').slice(-5).join(' | ');
      reject(new BenchError(`memledger serve ${why}${last === '' ? '' : `: ${last}`}`));
    };
    const timer = setTimeout(
      () => fail(`printed no URL within ${START_TIMEOUT_MS / 1000} s`),
      START_TIMEOUT_MS,
    );
    child.once('error', (err) => fail(`could not start (${err.message})`));
    onEarlyExit = fail;
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      const m = /"url"\s*:\s*"(https?:\/\/[^"]+)"/u.exec(stdout);
      if (m?.[1] === undefined) return;
      if (served) return;
      served = true;
      clearTimeout(timer);
      resolve({
        url: m[1],
        pid: child.pid ?? -1,
        stderr: () => stderr,
        stop,
      });
    });
  });
}
