/**
 * Whole-process cost of the commands an agent's host runs most (issue 35, item 5): `turn add`,
 * `arrival`, `recall`, `hook stop` and `hook session-start`, each as `node dist/cli/main.js …`,
 * timed from spawn to exit:
 *
 * - warm: an embedded store whose host is running (started by the warm-up run);
 * - cold: the same store with no host running (each run starts one; it is stopped after);
 * - postgres: the same seed on the PostgreSQL server (MEMLEDGER_TEST_PG or the local one).
 *
 * Each figure is the median of --runs runs (5) after one warm-up, with its ratio to
 * `memledger --help` (the cost of starting the program at all). The store holds one subject
 * seeded as the serve bench seeds it (bench/support/serve-seed.ts): 20 sessions of 60 turns and
 * 30 facts decided in a signed chain, lengthened to --links (10,000) links with slot delegations
 * signed by the same key (the trust view's first build on a long chain is a command's largest
 * cost unless the host keeps it); commands check reads against the owner's key file (--key).
 *
 * Then concurrency: --writers (8) processes each record --turns (200) user turns on one embedded
 * store at once, each through the shared host (createEngine({ shared: true })), as one process per
 * writer; the report counts turns acknowledged, turns found afterwards, and errors.
 *
 *   npm run bench:cli -- [--runs N] [--links N] [--writers N] [--turns N] [--no-postgres] [--json]
 *
 * Targets (issue 35): warm ≤ 0.3 s and cold ≤ 1.5 s per command (median); 0 acknowledged turns
 * lost. It reports; it never fails on a slow figure.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import {
  createEngine,
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type OwnerSigner,
} from '../src/index.js';
import { benchAnchor, padChain } from './support/owner-chain.js';
import type { BenchKind } from '../eval/bench-store.js';
import { positiveInt } from './support/args.js';
import { BenchError } from './support/bench-error.js';
import { progress } from './support/progress.js';
import { runMain } from './support/run-main.js';
import { newServeStore, seedServeStore, SUBJECT, type ServeStore } from './support/serve-seed.js';
import { median } from './support/stats.js';

const MAIN = resolve(import.meta.dirname, '../cli/main.js');
const SELF = resolve(import.meta.dirname, 'cli-bench.js');

interface Settings {
  runs: number;
  /** Links in the subject's signed chain (the seed's decisions, then delegations). */
  links: number;
  writers: number;
  turns: number;
  postgres: boolean;
  json: boolean;
}

function parse(argv: readonly string[]): Settings {
  const s: Settings = {
    runs: 5,
    links: 10_000,
    writers: 8,
    turns: 200,
    postgres: true,
    json: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = (): string => argv[++i] ?? '';
    if (a === '--runs') s.runs = positiveInt('runs', next(), 1);
    else if (a === '--links') s.links = positiveInt('links', next(), 1);
    else if (a === '--writers') s.writers = positiveInt('writers', next(), 1);
    else if (a === '--turns') s.turns = positiveInt('turns', next(), 1);
    else if (a === '--no-postgres') s.postgres = false;
    else if (a === '--json') s.json = true;
    else throw new BenchError(`unknown option ${a}`);
  }
  return s;
}

/** One command: its arguments after the store's, and what it reads on stdin. */
interface CommandCase {
  name: string;
  args: string[];
  stdin?: string;
}

function timed(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin = '',
): { ms: number; ok: boolean; err: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [MAIN, ...args], { env, input: stdin, encoding: 'utf8' });
  return { ms: performance.now() - t0, ok: r.status === 0, err: (r.stderr ?? '').slice(0, 300) };
}

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

/** Stops the store's host (SIGTERM) and waits until it has let the store go. */
async function stopHost(dir: string): Promise<void> {
  const pid = lockPid(dir);
  if (pid === null || !alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  while (alive(pid)) await new Promise((r) => setTimeout(r, 10));
}

function cases(live: string, transcript: string, hookSession: string): CommandCase[] {
  const hookInput = (event: string): string =>
    JSON.stringify({
      session_id: hookSession,
      transcript_path: transcript,
      cwd: tmpdir(),
      hook_event_name: event,
    });
  return [
    {
      name: 'turn add',
      args: ['turn', 'add', '--session', live, '--role', 'user', '--text', 'I moved to Lund'],
    },
    {
      name: 'arrival',
      args: ['arrival', '--surface', 'chat', '--session', live, '--message', 'where do I live?'],
    },
    { name: 'recall', args: ['recall', 'where did I move'] },
    { name: 'hook stop', args: ['hook', 'stop'], stdin: hookInput('Stop') },
    {
      name: 'hook session-start',
      args: ['hook', 'session-start'],
      stdin: hookInput('SessionStart'),
    },
  ];
}

type Row = Record<string, number | null>;

async function measureStore(
  label: string,
  store: ServeStore,
  keyFile: string,
  settings: Settings,
  cold: boolean,
  work: CommandCase[],
  env: NodeJS.ProcessEnv,
): Promise<Row> {
  const row: Row = {};
  const common = ['--db', store.db, '--subject', SUBJECT, '--key', keyFile, '--json'];
  for (const c of work) {
    const times: number[] = [];
    for (let run = 0; run <= settings.runs; run++) {
      if (cold) await stopHost(store.db);
      progress(`${label}: ${c.name} ${run}/${settings.runs}`);
      const r = timed([...c.args, ...common], env, c.stdin);
      if (!r.ok) throw new BenchError(`${label} ${c.name} failed: ${r.err}`);
      if (run > 0) times.push(r.ms); // run 0 warms the file cache (and, warm, starts the host)
    }
    row[c.name] = median(times);
  }
  return row;
}

/**
 * Lengthens the seeded subject's chain to `links` (bench/support/owner-chain.ts padChain) and
 * checks the whole chain with the engine's own full audit; returns its length.
 */
async function lengthenChain(
  store: ServeStore,
  signer: OwnerSigner,
  links: number,
): Promise<number> {
  const engine = await createEngine({ db: store.db, create: false, anchor: benchAnchor(signer) });
  try {
    await padChain(engine, SUBJECT, signer, links, 'actions_taken', ['web_search']);
    const report = await engine.subject(SUBJECT).owner.verifyChain();
    if (!report.ok) throw new BenchError(`the padded chain does not verify: ${report.reason}`);
    return report.length;
  } finally {
    await engine.close();
  }
}

/** `--writers` processes recording `--turns` turns each on one embedded store at once. */
async function concurrency(
  store: ServeStore,
  settings: Settings,
  env: NodeJS.ProcessEnv,
): Promise<{ acked: number; found: number; errors: number; seconds: number }> {
  const t0 = performance.now();
  const runs = await Promise.all(
    Array.from(
      { length: settings.writers },
      (_, w) =>
        new Promise<{ acked: string[]; errors: number }>((done, fail) => {
          const child = spawn(
            process.execPath,
            [SELF, '--writer', store.db, `writer-${w}`, `w${w}`, String(settings.turns)],
            { env, stdio: ['ignore', 'pipe', 'inherit'] },
          );
          const acked: string[] = [];
          let errors = 0;
          createInterface({ input: child.stdout }).on('line', (line) => {
            const doc = JSON.parse(line) as { ack?: string; error?: string };
            if (doc.ack !== undefined) acked.push(doc.ack);
            if (doc.error !== undefined) errors++;
          });
          child.on('error', fail);
          child.on('close', () => done({ acked, errors }));
        }),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  const acked = runs.flatMap((r) => r.acked);
  const engine = await createEngine({ db: store.db, create: false, shared: true });
  let found = 0;
  try {
    const me = engine.subject(SUBJECT);
    const want = new Set(acked);
    for (let w = 0; w < settings.writers; w++) {
      const turns = await me.history.turns(`writer-${w}`);
      found += turns.filter((t) => want.has(t.content)).length;
    }
  } finally {
    await engine.close();
  }
  return { acked: acked.length, found, errors: runs.reduce((n, r) => n + r.errors, 0), seconds };
}

/** The writer process of the concurrency run. */
async function writer(db: string, session: string, label: string, count: number): Promise<void> {
  const engine = await createEngine({ db, create: false, shared: true });
  const me = engine.subject(SUBJECT);
  await me.sessions.create({ id: session });
  for (let i = 0; i < count; i++) {
    const content = `${label} turn ${i}`;
    try {
      await me.turns.add({ sessionId: session, role: 'user', content });
      process.stdout.write(JSON.stringify({ ack: content }) + '\n');
    } catch (err) {
      process.stdout.write(JSON.stringify({ error: (err as Error).message }) + '\n');
    }
  }
  await engine.close();
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--writer') {
    await writer(argv[1] ?? '', argv[2] ?? '', argv[3] ?? '', Number(argv[4]));
    return;
  }
  const settings = parse(argv);
  const scratch = mkdtempSync(join(tmpdir(), 'memledger-cli-bench-'));
  const transcript = join(scratch, 'transcript.jsonl');
  writeFileSync(
    transcript,
    [
      { type: 'user', uuid: 'u1', message: { role: 'user', content: 'Where do I live now?' } },
      {
        type: 'assistant',
        uuid: 'a1',
        message: { id: 'm1', role: 'assistant', content: [{ type: 'text', text: 'In Lund.' }] },
      },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n') + '\n',
  );
  const env = { ...process.env, MEMLEDGER_HOST_IDLE_SECONDS: '120' };
  // the owner's key file, as a user's: every command's reads are checked against it (--key)
  const keyFile = join(scratch, 'owner.key');
  writeOwnerKeyFile(keyFile, generateOwnerKey('bench owner passphrase').keyFile);
  const signer = loadOwnerKey(keyFile, 'bench owner passphrase');
  const kinds: BenchKind[] = settings.postgres ? ['pglite', 'postgres'] : ['pglite'];
  const results: Record<string, Row> = {};
  let writers: Awaited<ReturnType<typeof concurrency>> | null = null;
  let chainLinks = 0;
  const help: number[] = [];
  for (let run = 0; run <= settings.runs; run++) {
    const r = timed(['--help'], env);
    if (run > 0) help.push(r.ms);
  }
  for (const kind of kinds) {
    const store = newServeStore(kind);
    try {
      progress(`${kind}: seeding…`);
      const fixture = await seedServeStore(
        store,
        { sessions: 20, turnsPerSession: 60, liveSessions: 2, decided: 30 },
        1,
        7,
        signer,
      );
      progress(`${kind}: a chain of ${settings.links} links…`);
      chainLinks = await lengthenChain(store, signer, settings.links);
      const live = fixture.subjects[0]?.liveSessions[0] ?? '';
      const work = cases(live, transcript, `hook-${kind}`);
      if (kind === 'pglite') {
        results.warm = await measureStore('warm', store, keyFile, settings, false, work, env);
        results.cold = await measureStore('cold', store, keyFile, settings, true, work, env);
        await stopHost(store.db);
        const many = newServeStore('pglite');
        try {
          await seedServeStore(
            many,
            { sessions: 1, turnsPerSession: 2, liveSessions: 1, decided: 0 },
            1,
            7,
            signer,
          );
          progress(`concurrency: ${settings.writers} writers × ${settings.turns} turns…`);
          writers = await concurrency(many, settings, env);
        } finally {
          await stopHost(many.db);
          await many.cleanup();
        }
      } else {
        results.postgres = await measureStore(
          'postgres',
          store,
          keyFile,
          settings,
          false,
          work,
          env,
        );
      }
    } finally {
      if (kind === 'pglite') await stopHost(store.db);
      await store.cleanup();
    }
  }
  rmSync(scratch, { recursive: true, force: true });
  const helpMs = median(help);
  if (settings.json) {
    process.stdout.write(JSON.stringify({ helpMs, chainLinks, results, writers }) + '\n');
    return;
  }
  const names = Object.keys(results.warm ?? {});
  const cols = Object.keys(results);
  const fmt = (ms: number | null | undefined): string =>
    ms == null ? '—' : `${(ms / 1000).toFixed(2)} s (${(ms / helpMs).toFixed(1)}×)`;
  const lines = [
    `memledger --help: ${(helpMs / 1000).toFixed(2)} s (median of ${settings.runs})`,
    `the subject's signed chain: ${chainLinks} links, checked against the owner's key file`,
    '',
    `| command | ${cols.join(' | ')} |`,
    `|---|${cols.map(() => '---').join('|')}|`,
    ...names.map((n) => `| ${n} | ${cols.map((c) => fmt(results[c]?.[n])).join(' | ')} |`),
    '',
    'Median wall time, whole process (× memledger --help). Targets: warm ≤ 0.30 s, cold ≤ 1.50 s.',
  ];
  if (writers !== null) {
    lines.push(
      '',
      `${settings.writers} processes × ${settings.turns} turns on one embedded store: ` +
        `${writers.acked} acknowledged, ${writers.found} found afterwards, ${writers.errors} errors, ` +
        `${writers.seconds.toFixed(1)} s (${(writers.acked / writers.seconds).toFixed(0)} turns/s)`,
    );
  }
  process.stdout.write(lines.join('\n') + '\n');
}

runMain('cli-bench', main);
