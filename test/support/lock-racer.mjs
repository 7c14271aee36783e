// A child process for the lock tests, run with `node` against the compiled dist/ (npm run build).
// Every mode prints one JSON document per line on stdout and holds what it took until stdin ends.
//   race <lockFile> <dir>           ready, then on a "go" line: acquire; report won or the error
//   hold <lockFile> <dir>           acquire at once; report
//   write-late <lockFile> <ms>      create the lock file empty, write our record after <ms>
//   engine <dir> <session> <label> <count>
//                                   ready, then on "go": open the store, add <count> turns
import { closeSync, openSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

const [mode, ...args] = process.argv.slice(2);
const say = (doc) => process.stdout.write(JSON.stringify({ pid: process.pid, ...doc }) + '\n');
const lines = createInterface({ input: process.stdin });
const ended = new Promise((resolve) => lines.once('close', resolve));
const go = new Promise((resolve) => lines.on('line', (l) => l.trim() === 'go' && resolve()));
const failure = (err) => ({
  error: {
    code: err?.code ?? 'THROWN',
    message: String(err?.message ?? err),
    data: err?.data ?? null,
  },
});

async function lockMode(waitForGo) {
  const { DirLock } = await import('../../dist/src/pglite/dir-lock.js');
  const [lockFile, dir] = args;
  if (waitForGo) {
    say({ ready: true });
    await go;
  }
  let lock = null;
  try {
    lock = await DirLock.acquire(lockFile, dir);
    say({ won: true, nonce: lock.owner.nonce });
  } catch (err) {
    say({ won: false, ...failure(err) });
  }
  await ended;
  lock?.release();
}

async function writeLate() {
  const [lockFile, ms] = args;
  const fd = openSync(lockFile, 'wx', 0o600);
  say({ ready: true });
  await sleep(Number(ms));
  writeSync(
    fd,
    JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }),
  );
  closeSync(fd);
  say({ written: true });
  await ended;
}

async function engineMode() {
  const { createEngine } = await import('../../dist/src/index.js');
  const [dir, sessionId, label, count] = args;
  say({ ready: true });
  await go;
  let engine;
  try {
    engine = await createEngine({ db: dir, create: false });
  } catch (err) {
    say({ opened: false, ...failure(err) });
    await ended;
    return;
  }
  say({ opened: true });
  for (let i = 1; i <= Number(count); i++) {
    const content = `${label}-${i}`;
    const r = await engine.subject().turns.add({ sessionId, role: 'user', content });
    say({ ack: { seq: r.recorded ? r.turn.seq : null, content } });
  }
  say({ done: true });
  await ended;
  await engine.close();
}

const modes = {
  race: () => lockMode(true),
  hold: () => lockMode(false),
  'write-late': writeLate,
  engine: engineMode,
};
await modes[mode]();
process.exit(0);
