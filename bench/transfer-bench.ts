/**
 * Transfer benchmark (docs/EXPORT.md, "How long it takes"): on a store of N turns (default
 * 100,000) with a signed chain of approved facts, how long an export of the subject takes and how
 * big it is, how long importing it into a new store takes, the same for a backup of the whole
 * store and its restore, and a move to the other engine (a backup read and restored there). The
 * embedded stores live in data directories, as a user's does. Medians of --rounds runs. It
 * reports; it never fails on a slow figure. Usage: node dist/bench/transfer-bench.js
 * [--turns N] [--facts F] [--engines pglite,postgres] [--rounds R] [--json]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { storeClient } from '../src/engine/test-access.js';
import {
  createEngine,
  generateOwnerKey,
  loadOwnerKey,
  restoreBackup,
  writeOwnerKeyFile,
  type Engine,
  type OwnerSigner,
} from '../src/index.js';
import { analyze } from '../src/rules.js';
import { positiveInt } from './support/args.js';
import {
  BENCH_KINDS,
  benchKinds,
  PG_URL,
  withBenchStore,
  withPgClient,
  type BenchKind,
} from '../eval/bench-store.js';
import { progress } from './support/progress.js';
import { runMain } from './support/run-main.js';
import { median } from './support/stats.js';

const SUBJECT = 'owner';
const SESSIONS = 100;
const PASS = 'transfer bench passphrase';
const PLACES = ['harbour', 'market', 'library', 'station', 'bakery', 'clinic'];

const INSERT_SQL = `INSERT INTO turns (subject_id, session_id, seq, id, role, content, corrective,
  receipt_kind, receipt_tools, receipt_sources, recorded_at, terms)
SELECT $1, s, q, gen_random_uuid()::text, r, c, false, k,
  CASE WHEN k = 'tools' THEN ARRAY['web_search'] END,
  CASE WHEN k = 'tools' THEN ARRAY['https://example.org/' || q] END,
  now() - make_interval(secs => q), t
FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[])
  AS x(s, q, r, k, c, tj),
     LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text(tj::jsonb))) AS y(t)`;

/**
 * N turns over SESSIONS sessions (users and assistants in turn, every fourth reply with a
 * receipt of a web search), inserted in batches with their analysed terms, then F facts proposed
 * from user turns and approved, each a signed link.
 */
async function seed(engine: Engine, turns: number, facts: number, signer: OwnerSigner) {
  const me = engine.subject(SUBJECT);
  for (let s = 0; s < SESSIONS; s++) await me.sessions.create({ id: `s${s}` });
  const sql = storeClient(engine);
  const per = Math.ceil(turns / SESSIONS);
  const BATCH = 2000;
  for (let from = 0; from < turns; from += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, turns - from) }, (_, i) => {
      const n = from + i;
      const seq = (n % per) + 1;
      const user = seq % 2 === 1;
      const content = user
        ? `On day ${n % 365} I walked to the ${PLACES[n % PLACES.length]} with item ${n} and talked about release ${n % 97}.`
        : `I noted the ${PLACES[n % PLACES.length]} and item ${n - 1} for you.`;
      return {
        session: `s${Math.floor(n / per)}`,
        seq,
        role: user ? 'user' : 'assistant',
        kind: user ? null : seq % 8 === 0 ? 'tools' : 'none',
        content,
        terms: JSON.stringify(analyze(content)),
      };
    });
    await sql.query(INSERT_SQL, [
      SUBJECT,
      rows.map((r) => r.session),
      rows.map((r) => r.seq),
      rows.map((r) => r.role),
      rows.map((r) => r.kind),
      rows.map((r) => r.content),
      rows.map((r) => r.terms),
    ]);
    progress(`seeded ${Math.min(from + BATCH, turns)}/${turns} turns`);
  }
  await sql.query(
    `UPDATE sessions s SET (last_seq, term_len) = (
       SELECT max(seq), coalesce(sum(cardinality(terms)), 0) FROM turns t
       WHERE t.subject_id = s.subject_id AND t.session_id = s.id)
     WHERE subject_id = $1`,
    [SUBJECT],
  );
  for (let f = 0; f < facts; f++) {
    const session = `s${f % SESSIONS}`;
    const seq = 1 + 2 * Math.floor(f / SESSIONS);
    const said = (await me.history.turns(session, { from: seq, to: seq }))[0];
    if (said === undefined) throw new Error(`no turn ${seq} in ${session}`);
    const quote = said.content.slice(0, 40);
    const p = await me.gate.propose({
      sessionId: session,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: `The user said: ${quote}`,
          origin: 'saw',
          evidence: { turn: seq, quote },
        },
      ],
    });
    const id = p.proposed[0]?.id;
    if (id !== undefined) await me.owner.decide({ proposalId: id, decision: 'approve', signer });
    if ((f + 1) % 50 === 0) progress(`approved ${f + 1}/${facts} facts`);
  }
  await sql.exec('VACUUM ANALYZE');
}

/** A new, empty store of the kind (a data directory, or a schema), and how to remove it. */
async function blank(kind: BenchKind): Promise<{ db: string; drop(): Promise<void> }> {
  if (kind === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'ml-transfer-target-'));
    return {
      db: join(dir, 'store'),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `ml_transfer_t_${process.pid}_${Math.random().toString(16).slice(2, 10)}`;
  return {
    db: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`,
    drop: () =>
      withPgClient((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => undefined),
  };
}

interface Result {
  engine: BenchKind;
  turns: number;
  facts: number;
  rounds: number;
  exportMs: number;
  exportBytes: number;
  importMs: number;
  backupMs: number;
  backupBytes: number;
  restoreMs: number;
  /** A move to the other engine: the backup read here and restored there. */
  moveTo: BenchKind;
  moveMs: number;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function run(kind: BenchKind, turns: number, facts: number, rounds: number): Promise<Result> {
  const work = mkdtempSync(join(tmpdir(), 'ml-transfer-bench-'));
  try {
    const keyFile = join(work, 'owner.key');
    writeOwnerKeyFile(keyFile, generateOwnerKey(PASS).keyFile);
    const signer = loadOwnerKey(keyFile, PASS);
    return await withBenchStore(
      kind,
      'ml_transfer',
      async (engine) => {
        await engine.subjects.create(SUBJECT);
        await engine
          .subject(SUBJECT)
          .owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
        await seed(engine, turns, facts, signer);
        const other: BenchKind = kind === 'pglite' ? 'postgres' : 'pglite';
        const m = {
          exportMs: [] as number[],
          exportBytes: 0,
          importMs: [] as number[],
          backupMs: [] as number[],
          backupBytes: 0,
          restoreMs: [] as number[],
          moveMs: [] as number[],
        };
        for (let r = 0; r < rounds; r++) {
          const ex = await timed(() => engine.subjects.export(SUBJECT, join(work, `export-${r}`)));
          m.exportMs.push(ex.ms);
          m.exportBytes = ex.value.bytes;
          progress(`${kind}: export ${r + 1}/${rounds}: ${ex.ms.toFixed(0)} ms`);
          const into = await blank(kind);
          try {
            const target = await createEngine({ db: into.db });
            try {
              const im = await timed(() => target.subjects.import(ex.value.path));
              m.importMs.push(im.ms);
              progress(`${kind}: import ${r + 1}/${rounds}: ${im.ms.toFixed(0)} ms`);
            } finally {
              await target.close();
            }
          } finally {
            await into.drop();
          }
          const bk = await timed(() => engine.backup(join(work, `backup-${r}`)));
          m.backupMs.push(bk.ms);
          m.backupBytes = bk.value.bytes;
          progress(`${kind}: backup ${r + 1}/${rounds}: ${bk.ms.toFixed(0)} ms`);
          for (const [where, list] of [
            [kind, m.restoreMs],
            [other, m.moveMs],
          ] as const) {
            const to = await blank(where);
            try {
              const rs = await timed(() => restoreBackup({ from: bk.value.path, db: to.db }));
              // a move is the backup read here and restored there
              list.push(where === kind ? rs.ms : rs.ms + bk.ms);
              progress(`${kind}: restore into ${where} ${r + 1}/${rounds}: ${rs.ms.toFixed(0)} ms`);
            } finally {
              await to.drop();
            }
          }
          rmSync(join(work, `export-${r}`), { recursive: true, force: true });
          rmSync(join(work, `backup-${r}`), { recursive: true, force: true });
        }
        return {
          engine: kind,
          turns,
          facts,
          rounds,
          exportMs: median(m.exportMs),
          exportBytes: m.exportBytes,
          importMs: median(m.importMs),
          backupMs: median(m.backupMs),
          backupBytes: m.backupBytes,
          restoreMs: median(m.restoreMs),
          moveTo: other,
          moveMs: median(m.moveMs),
        };
      },
      {},
      { pgliteDir: true },
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      turns: { type: 'string', default: '100000' },
      facts: { type: 'string', default: '200' },
      engines: { type: 'string', default: BENCH_KINDS.join(',') },
      rounds: { type: 'string', default: '3' },
      json: { type: 'boolean', default: false },
    },
  });
  const turns = positiveInt('--turns', values.turns, 100);
  const facts = positiveInt('--facts', values.facts, 1);
  const rounds = positiveInt('--rounds', values.rounds, 1);
  const kinds = await benchKinds(values.engines);
  // a move goes to the other engine: both must be reachable
  await benchKinds(BENCH_KINDS.join(','));
  const results: Result[] = [];
  for (const kind of kinds) results.push(await run(kind, turns, facts, rounds));
  if (values.json) {
    console.log(JSON.stringify({ results }, null, 2));
    return;
  }
  for (const r of results) {
    console.log(
      `${r.engine}, ${r.turns} turns, ${r.facts} signed facts (medians of ${r.rounds}): export ${s(r.exportMs)} (${mib(r.exportBytes)}), import into a new ${r.engine} store ${s(r.importMs)}; backup ${s(r.backupMs)} (${mib(r.backupBytes)}), restore ${s(r.restoreMs)}; move to ${r.moveTo} ${s(r.moveMs)}`,
    );
  }
}

runMain('transfer-bench', main);
