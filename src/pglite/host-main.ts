/**
 * The store host's program: `node host-main.js <dir> [--create] [--idle-ms=N]`, started detached
 * by `spawnHost`. It prints one JSON line (`{"ready":true}`, or `{"error":{code,message,data}}`)
 * for the process that started it, then serves the store until it has had no client for the idle
 * time, or is sent SIGTERM or SIGINT. It writes nothing after that line: whoever started it may
 * have gone.
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { nodeChainCrypto } from '../crypto/chain-crypto.js';
import { rememberingVerifier } from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import { createHostViews } from '../trust/host-views.js';
import { StoreHost } from './store-host.js';

/**
 * V8 compiles PGlite's WebAssembly (9 MB) to optimized code once a function has run enough. At
 * the default budget a new host spends its first second doing so on the cores the command that
 * started it waits on. A budget 10 times larger runs the boot and the first commands on baseline
 * code and optimizes what stays hot: measured on the dev machine, a host ready in 0.81 s against
 * 0.85 to 0.95 s, the first command after it 0.40 s against 0.53 s, and recall on a 100,000-turn
 * store as fast (bench:recall, PGlite: p50 9.7 ms, p95 13.6 ms). Baseline code alone
 * (`--liftoff-only`) starts faster still but made recall 40% slower for good; 100 times the
 * budget started 0.1 s faster but kept warm commands on slower code for longer. Set here, before
 * PGlite is compiled, not on the command line: a Node whose V8 lacked the flag would refuse to
 * start with it there, and here only ignores it.
 */
setFlagsFromString('--wasm-tiering-budget=18000000');

/** Where a host that fails after starting says why (the store's directory). */
const LOG_FILE = 'memledger-host.log';

function say(line: unknown): void {
  process.stdout.write(JSON.stringify(line) + '\n');
}

async function main(argv: readonly string[]): Promise<void> {
  const dir = argv.find((a) => !a.startsWith('--'));
  const idle = argv.find((a) => a.startsWith('--idle-ms='));
  const idleMs = idle === undefined ? undefined : Number(idle.slice('--idle-ms='.length));
  if (
    dir === undefined ||
    (idleMs !== undefined && !(Number.isSafeInteger(idleMs) && idleMs > 0))
  ) {
    say({
      error: {
        code: 'INVALID_ARGUMENT',
        message: 'usage: host-main <dir> [--create] [--idle-ms=N]',
      },
    });
    process.exitCode = 2;
    return;
  }
  let host: StoreHost;
  try {
    host = await StoreHost.start({
      dir,
      create: argv.includes('--create'),
      views: (client) => createHostViews({ client, crypto: rememberingVerifier(nodeChainCrypto) }),
      ...(idleMs === undefined ? {} : { idleMs }),
    });
  } catch (err) {
    const e =
      err instanceof EngineError
        ? {
            code: err.code,
            message: err.message,
            ...(err.data === undefined ? {} : { data: err.data }),
          }
        : { code: 'DB_UNUSABLE', message: (err as Error).message };
    say({ error: e });
    process.exitCode = 1;
    return;
  }
  // Whoever started this process may be gone: nothing more is written to its pipes.
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);
  say({ ready: true });
  const log = (what: string): void => {
    try {
      // never through a symlink someone put there, and readable by this user only
      const fd = openSync(
        join(dir, LOG_FILE),
        constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
        0o600,
      );
      try {
        writeSync(fd, `${new Date().toISOString()} ${process.pid} ${what}\n`);
      } finally {
        closeSync(fd);
      }
    } catch {
      // nowhere to say it
    }
  };
  const stop = (why: string) => (): void => {
    log(`stopping: ${why}`);
    void host.stop();
  };
  process.on('SIGTERM', stop('SIGTERM'));
  process.on('SIGINT', stop('SIGINT'));
  process.on('SIGHUP', () => undefined);
  process.on('uncaughtException', (err) => {
    log(`failed: ${err.stack ?? err.message}`);
    void host.stop().finally(() => process.exit(1));
  });
  await host.stopped;
}

// No top-level await: see cli/main.ts.
void main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  process.exitCode = 1;
});
