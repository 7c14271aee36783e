/**
 * Crash benchmark (issue 12): kills a writer with SIGKILL at random moments and checks what the
 * store kept. Each engine runs `--trials` trials (default 100), the workloads in rotation:
 *
 * - `turns`: a writer (bench/crash-writer.ts, a child process on the public engine API) records
 *   turns into a new session;
 * - `propose`: it records a user turn and puts a proposal quoting it through the gate, again and
 *   again;
 * - `decide`: the same, and the owner approves or rejects each proposal, signed with the owner
 *   key loaded from its file as the CLI does;
 * - `init`: the real CLI `memledger init` on a new store and key file.
 *
 * A writer prints an acknowledgement line only after its call resolved, and is killed 50–400 ms
 * (`--kill-ms`) after its first acknowledged write of the workload's kind (its first turn,
 * proposal or decision), so the kill lands among those writes, not in its start-up. Each writing workload
 * keeps one store per engine from trial to trial (a PGlite directory, a PostgreSQL schema), so
 * every crash is also a crash of a store that has crashed before, and every check covers every
 * write that store ever acknowledged. After each kill the store is opened again in this process
 * (never created), each acknowledged write is looked up (sessions by id, turns by session and
 * seq, proposals by id and text, decisions by seq, proposal and status), and the owner's chain is
 * verified against the key file. A store that does not open counts all its writes as lost and is
 * replaced, as is one whose chain fails.
 *
 * `init` is killed at a moment drawn from its own run: one init on each engine runs to the end
 * first, and the kill falls between 10% and 110% of that time, so some inits finish first. An
 * init that printed its result is an acknowledged write (the store must then hold the subject
 * and its key). Whatever the kill left, `init` run again must succeed (else the store failed to
 * reopen), and the store must open and its chain verify against the key file.
 *
 * Needs the build (`npm run bench:crash` builds first): the writer and the CLI run from dist/.
 * Exits non-zero when an acknowledged write was lost, a store failed to reopen or a chain failed.
 * Usage: node dist/bench/crash-bench.js [--trials N] [--engine pglite|postgres|both]
 * [--seed S] [--kill-ms MIN-MAX] [--workloads turns,propose,decide,init] [--keep] [--json]
 * (`--keep` leaves the stores, schemas and key files in place and prints where they are.)
 */
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { benchKinds, type BenchKind } from '../eval/bench-store.js';
import { generateOwnerKey, writeOwnerKeyFile } from '../src/index.js';
import { positiveInt } from './support/args.js';
import { BenchError } from './support/bench-error.js';
import { runChild } from './support/crash-child.js';
import { newLocation } from './support/crash-stores.js';
import {
  cliFailure,
  EngineRun,
  initArgs,
  WORKLOADS,
  type Failure,
  type Tally,
  type Workload,
} from './support/crash-trials.js';
import { cyclic } from './support/cyclic.js';
import { progress } from './support/progress.js';
import { runMain } from './support/run-main.js';
import { seededRandom } from './support/seeded-random.js';

const PASSPHRASE = 'crash-bench owner passphrase';
const SHOWN_FAILURES = 20;

interface EngineResult {
  engine: BenchKind;
  seconds: number;
  /** How long one init took when not killed, and the window its kills were drawn from. */
  initCalibrationMs: number;
  initKillMs: { min: number; max: number };
  total: Tally;
  byWorkload: Record<Workload, Tally>;
  failures: Failure[];
  /** What the negative controls showed (bench/support/crash-trials.ts, `controls`). */
  controls: string;
}

function workloadList(value: string): Workload[] {
  const list = value.split(',').map((w) => w.trim());
  const bad = list.filter((w) => !(WORKLOADS as readonly string[]).includes(w));
  if (bad.length > 0 || list.length === 0)
    throw new BenchError(`--workloads takes a list of ${WORKLOADS.join(', ')}`);
  return list as Workload[];
}

function killWindow(value: string): { min: number; max: number } {
  const m = /^(\d+)-(\d+)$/.exec(value);
  const min = Number(m?.[1]);
  const max = Number(m?.[2]);
  if (m === null || !(min <= max))
    throw new BenchError('--kill-ms must be MIN-MAX in ms, e.g. 50-400');
  return { min, max };
}

/** One init run to its end on a throwaway store: how long an unkilled init takes here. */
async function calibrateInit(kind: BenchKind, root: string, passFile: string): Promise<number> {
  const loc = newLocation(kind, root, `${kind}-calibration`);
  const keyPath = join(root, `${kind}-calibration.key`);
  try {
    const run = await runChild(initArgs(loc.db, keyPath, passFile), null, 120_000);
    if (run.exitCode !== 0)
      throw new BenchError(`init does not run on ${kind}: ${cliFailure(run)}`);
    return run.ms;
  } finally {
    await loc.cleanup();
    rmSync(keyPath, { force: true });
  }
}

async function runEngine(
  kind: BenchKind,
  trials: number,
  workloads: readonly Workload[],
  root: string,
  key: ConstructorParameters<typeof EngineRun>[2],
  random: () => number,
  killMs: { min: number; max: number },
  keep: boolean,
): Promise<EngineResult> {
  let initCalibrationMs = 0;
  if (workloads.includes('init')) {
    progress(`${kind}: timing one init…`);
    initCalibrationMs = await calibrateInit(kind, root, key.passFile);
  }
  const initKillMs = {
    min: Math.round(initCalibrationMs * 0.1),
    max: Math.round(initCalibrationMs * 1.1),
  };
  const run = new EngineRun(kind, root, key, random, killMs, initKillMs, keep);
  const t0 = performance.now();
  let controls: string;
  try {
    for (let i = 1; i <= trials; i++) {
      const w = cyclic(workloads, i - 1);
      if (w === 'init') await run.initTrial(i);
      else await run.writerTrial(w, i);
      if (i % 10 === 0 || i === trials) {
        const t = run.total();
        progress(
          `${kind}: ${i}/${trials} trials, ${t.acknowledgedWrites} acknowledged, ${t.acknowledgedWritesLost} lost, ` +
            `${t.storesFailedToReopen} failed to reopen, ${t.chainsFailedToVerify} chains failed ` +
            `(${((performance.now() - t0) / 1000).toFixed(0)} s)`,
        );
      }
    }
    controls = await run.controls();
  } finally {
    await run.cleanup();
  }
  return {
    engine: kind,
    seconds: (performance.now() - t0) / 1000,
    initCalibrationMs,
    initKillMs,
    total: run.total(),
    byWorkload: run.tallies,
    failures: run.failures,
    controls,
  };
}

const met = (t: Tally): boolean =>
  t.acknowledgedWritesLost === 0 && t.storesFailedToReopen === 0 && t.chainsFailedToVerify === 0;

function printText(
  results: EngineResult[],
  o: { trials: number; seed: number; killMs: { min: number; max: number }; root: string | null },
): void {
  const int = (n: number, w: number): string => n.toLocaleString('en-US').padStart(w);
  const timed = results.filter((r) => r.initCalibrationMs > 0);
  console.log(
    `crash: ${o.trials} trials per engine, each a child killed with SIGKILL (seed ${o.seed}): ` +
      `writers ${o.killMs.min}–${o.killMs.max} ms after their first turn, proposal or decision` +
      (timed.length === 0
        ? ''
        : `; init at 10–110% of an unkilled init (${timed.map((r) => `${r.engine} ${Math.round(r.initCalibrationMs)} ms`).join(', ')})`),
  );
  console.log(
    'killed: the kill found the child running; acked: writes acknowledged before it; lost: of ' +
      'those, not found as acknowledged after reopening; no reopen: stores that did not open (for ' +
      'init: init run again failed); chain bad: chains that failed to verify; writer err: children ' +
      'that stopped by themselves',
  );
  console.log('');
  const head = ['trials', 'killed', 'acked', 'lost', 'no reopen', 'chain bad', 'writer err'];
  console.log(
    `${'engine'.padEnd(9)} ${'workload'.padEnd(8)} ${head.map((h) => h.padStart(10)).join(' ')}`,
  );
  for (const r of results) {
    const rows: Array<[string, Tally]> = [
      ...WORKLOADS.filter((w) => r.byWorkload[w].trials > 0).map((w): [string, Tally] => [
        w,
        r.byWorkload[w],
      ]),
      ['all', r.total],
    ];
    for (const [i, [w, t]] of rows.entries()) {
      const cells = [
        t.trials,
        t.killedMidRun,
        t.acknowledgedWrites,
        t.acknowledgedWritesLost,
        t.storesFailedToReopen,
        t.chainsFailedToVerify,
        t.writerFailures,
      ];
      console.log(
        `${(i === 0 ? r.engine : '').padEnd(9)} ${w.padEnd(8)} ${cells.map((c) => int(c, 10)).join(' ')}`,
      );
    }
  }
  console.log('');
  for (const r of results) {
    const cut = Object.entries(r.total.interrupted)
      .sort((a, b) => b[1] - a[1])
      .map(([op, n]) => `${op} ${n}`)
      .join(', ');
    console.log(`${r.engine}: controls: ${r.controls}`);
    console.log(
      `${r.engine}: the kills interrupted ${cut === '' ? 'nothing' : cut} (${r.seconds.toFixed(0)} s)`,
    );
  }
  const failures = results.flatMap((r) => r.failures);
  if (failures.length > 0) {
    console.log('');
    console.log(`failures (${Math.min(failures.length, SHOWN_FAILURES)} of ${failures.length}):`);
    for (const f of failures.slice(0, SHOWN_FAILURES))
      console.log(
        `  ${f.engine} ${f.workload} trial ${f.trial}, ${f.what}: ${f.detail}\n    in ${f.store}`,
      );
  }
  if (o.root !== null) console.log(`\nstores and key files kept in ${o.root}`);
  console.log('');
  for (const r of results) {
    const t = r.total;
    console.log(
      `${r.engine}: trials ${t.trials}, acknowledged writes ${t.acknowledgedWrites}, ` +
        `acknowledged writes lost ${t.acknowledgedWritesLost} (target 0), ` +
        `stores that failed to reopen ${t.storesFailedToReopen} (target 0), ` +
        `chains that failed to verify ${t.chainsFailedToVerify} (target 0): ${met(t) ? 'met' : 'NOT met'}`,
    );
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      trials: { type: 'string', default: '100' },
      engine: { type: 'string', default: 'both' },
      seed: { type: 'string' },
      'kill-ms': { type: 'string', default: '50-400' },
      workloads: { type: 'string', default: WORKLOADS.join(',') },
      keep: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const trials = positiveInt('trials', values.trials, 1);
  const seed = values.seed === undefined ? randomInt(2 ** 31) : positiveInt('seed', values.seed, 0);
  const killMs = killWindow(values['kill-ms']);
  const workloads = workloadList(values.workloads);
  if (!['pglite', 'postgres', 'both'].includes(values.engine))
    throw new BenchError('--engine must be pglite, postgres or both');
  const kinds = await benchKinds(values.engine === 'both' ? 'pglite,postgres' : values.engine);

  const root = mkdtempSync(join(tmpdir(), 'ml-crash-'));
  const results: EngineResult[] = [];
  try {
    const passFile = join(root, 'passphrase');
    writeFileSync(passFile, `${PASSPHRASE}\n`, { mode: 0o600 });
    const owner = generateOwnerKey(PASSPHRASE);
    const keyPath = join(root, 'owner.key');
    writeOwnerKeyFile(keyPath, owner.keyFile);
    const key = { path: keyPath, passFile, keyId: owner.keyId, publicKeyPem: owner.publicKeyPem };
    const random = seededRandom(seed);
    for (const kind of kinds)
      results.push(
        await runEngine(kind, trials, workloads, root, key, random, killMs, values.keep),
      );
  } finally {
    if (!values.keep) rmSync(root, { recursive: true, force: true });
  }

  if (!results.every((r) => met(r.total))) process.exitCode = 1;
  if (values.json) {
    console.log(
      JSON.stringify(
        {
          trialsPerEngine: trials,
          seed,
          killAfterFirstAckMs: killMs,
          workloads,
          results: results.map((r) => ({
            engine: r.engine,
            trials: r.total.trials,
            acknowledgedWrites: r.total.acknowledgedWrites,
            acknowledgedWritesLost: r.total.acknowledgedWritesLost,
            storesFailedToReopen: r.total.storesFailedToReopen,
            chainsFailedToVerify: r.total.chainsFailedToVerify,
            writerFailures: r.total.writerFailures,
            met: met(r.total),
            seconds: r.seconds,
            initCalibrationMs: r.initCalibrationMs,
            initKillMs: r.initKillMs,
            interrupted: r.total.interrupted,
            byWorkload: r.byWorkload,
            failures: r.failures,
            controls: r.controls,
          })),
          kept: values.keep ? root : null,
        },
        null,
        2,
      ),
    );
    return;
  }
  printText(results, { trials, seed, killMs, root: values.keep ? root : null });
}

runMain('crash-bench', main);
