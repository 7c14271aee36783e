/**
 * Forget benchmark: what a signed forget of one turn costs on a store of N turns (the turn, the
 * fact approved from it, their recall postings), and how much of it is removing the bytes
 * (`scrubForgotten`: VACUUM FULL of the tables a forget touches, fresh statistics and, embedded,
 * the write-ahead log), which rewrites those tables whole and so grows with the store. The
 * embedded store lives in a data directory, as a user's does. It reports; it never fails on a
 * slow figure. Usage: node dist/bench/forget-bench.js [--turns N] [--engines pglite,postgres]
 * [--rounds R] [--json]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { storeClient } from '../src/engine/test-access.js';
import { generateOwnerKey, loadOwnerKey, writeOwnerKeyFile, type Engine } from '../src/index.js';
import { analyze } from '../src/rules.js';
import { scrubForgotten } from '../src/store/forget-sql.js';
import { positiveInt } from './support/args.js';
import { BENCH_KINDS, benchKinds, withBenchStore, type BenchKind } from '../eval/bench-store.js';
import { progress } from './support/progress.js';
import { runMain } from './support/run-main.js';
import { median } from './support/stats.js';

const SUBJECT = 'owner';
const SESSIONS = 20;
const PASS = 'forget bench passphrase';

const INSERT_SQL = `INSERT INTO turns (subject_id, session_id, seq, id, role, content, corrective,
  receipt_kind, receipt_tools, receipt_sources, recorded_at, terms)
SELECT $1, s, q, gen_random_uuid()::text, 'user', c, false, NULL, NULL, NULL, now(), t
FROM unnest($2::text[], $3::int[], $4::text[], $5::text[]) AS x(s, q, c, tj),
     LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text(tj::jsonb))) AS y(t)`;

/**
 * N user turns over SESSIONS sessions, inserted in batches with their analysed terms (the index
 * trigger posts them; each session's counter and length are set as the engine would).
 */
async function seed(engine: Engine, turns: number): Promise<void> {
  const me = engine.subject(SUBJECT);
  for (let s = 0; s < SESSIONS; s++) await me.sessions.create({ id: `s${s}` });
  const sql = storeClient(engine);
  const per = Math.ceil(turns / SESSIONS);
  const BATCH = 2000;
  let done = 0;
  for (let from = 0; from < turns; from += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, turns - from) }, (_, i) => {
      const n = from + i;
      const session = `s${Math.floor(n / per)}`;
      const seq = (n % per) + 1;
      const content = `On day ${n % 365} I walked to the ${['harbour', 'market', 'library', 'station'][n % 4]} with item ${n} and talked about release ${n % 97}.`;
      return { session, seq, content, terms: JSON.stringify(analyze(content)) };
    });
    await sql.query(INSERT_SQL, [
      SUBJECT,
      rows.map((r) => r.session),
      rows.map((r) => r.seq),
      rows.map((r) => r.content),
      rows.map((r) => r.terms),
    ]);
    done += rows.length;
    progress(`seeded ${done}/${turns} turns`);
  }
  await sql.query(
    `UPDATE sessions s SET (last_seq, term_len) = (
       SELECT max(seq), coalesce(sum(cardinality(terms)), 0) FROM turns t
       WHERE t.subject_id = s.subject_id AND t.session_id = s.id)
     WHERE subject_id = $1`,
    [SUBJECT],
  );
  await sql.exec('VACUUM ANALYZE');
}

interface Result {
  engine: BenchKind;
  turns: number;
  rounds: number;
  forgetMs: number;
  scrubMs: number;
}

async function run(kind: BenchKind, turns: number, rounds: number): Promise<Result> {
  const keyDir = mkdtempSync(join(tmpdir(), 'ml-forget-bench-'));
  try {
    const keyFile = join(keyDir, 'owner.key');
    writeOwnerKeyFile(keyFile, generateOwnerKey(PASS).keyFile);
    const signer = loadOwnerKey(keyFile, PASS);
    return await withBenchStore(
      kind,
      'ml_forget',
      async (engine) => {
        await engine.subjects.create(SUBJECT);
        const me = engine.subject(SUBJECT);
        await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
        await seed(engine, turns);
        const forgets: number[] = [];
        const scrubs: number[] = [];
        for (let r = 0; r < rounds; r++) {
          const session = `s${r % SESSIONS}`;
          const seq = 1 + r;
          const said = (await me.history.turns(session, { from: seq, to: seq }))[0];
          if (said === undefined) throw new Error(`no turn ${seq} in ${session}`);
          const quote = said.content.slice(0, 24);
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
          if (id !== undefined)
            await me.owner.decide({ proposalId: id, decision: 'approve', signer });
          const t0 = performance.now();
          await me.owner.forget({ scope: { kind: 'turn', session, seq }, withFacts: true, signer });
          forgets.push(performance.now() - t0);
          // the scrub alone, again, for its share
          const t1 = performance.now();
          await scrubForgotten(storeClient(engine));
          scrubs.push(performance.now() - t1);
          progress(`${kind}: round ${r + 1}/${rounds}: forget ${forgets.at(-1)?.toFixed(0)} ms`);
        }
        return { engine: kind, turns, rounds, forgetMs: median(forgets), scrubMs: median(scrubs) };
      },
      {},
      { pgliteDir: true },
    );
  } finally {
    rmSync(keyDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      turns: { type: 'string', default: '20000' },
      engines: { type: 'string', default: BENCH_KINDS.join(',') },
      rounds: { type: 'string', default: '3' },
      json: { type: 'boolean', default: false },
    },
  });
  const turns = positiveInt('--turns', values.turns, 100);
  const rounds = positiveInt('--rounds', values.rounds, 1);
  const results: Result[] = [];
  for (const kind of await benchKinds(values.engines)) results.push(await run(kind, turns, rounds));
  if (values.json) {
    console.log(JSON.stringify({ results }, null, 2));
    return;
  }
  for (const r of results) {
    console.log(
      `${r.engine}: ${r.turns} turns: a signed forget of one turn (and its fact) takes ${r.forgetMs.toFixed(0)} ms (median of ${r.rounds}), of which removing the bytes about ${r.scrubMs.toFixed(0)} ms`,
    );
  }
}

runMain('forget-bench', main);
