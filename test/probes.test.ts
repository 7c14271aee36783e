import { randomInt, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction, Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DENIED_SQL_FUNCTIONS } from '../src/domain/probe-spec.js';
import {
  createEngine,
  createFileInstrument,
  createHttpInstrument,
  createSqlInstrument,
  type Engine,
  type ProbeInstrument,
  type ProbeSpec,
  type SubjectHandle,
} from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { resolveProbeConfig } from '../src/probes/probe-config.js';
import { createProbeModule } from '../src/probes/probe-service.js';
import type { ReadOnlySql } from '../src/store/read-only-sql.js';
import {
  engineBeside,
  ENGINES,
  ONE_ENGINE,
  openTestEngine,
  PG_URL,
  type TestEngine,
  testStore,
} from './support/engines.js';
import { fileContext, tempDir } from './support/probe-fixtures.js';
import { code } from './support/errors.js';

const tmp = tempDir('memledger-probes-');
afterAll(tmp.cleanup);
writeFileSync(join(tmp.dir, 'claims.txt'), 'deployed on friday\n');

/** An instrument that believes everything (seed 000 §6.2). */
const yesMan = (name: string): ProbeInstrument => ({
  name,
  kind: 'file',
  run: async () => ({ verdict: 'verified', errorCode: null, evidence: {} }),
  controls: (ctx) => createFileInstrument().controls(ctx),
});

/** A server that counts the connections it receives; `hang` never answers. */
interface CountingServer {
  url: string;
  connections: number;
  close(): Promise<void>;
}

async function countingServer(
  body: string,
  options: { hang?: boolean } = {},
): Promise<CountingServer> {
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server: Server = createServer((_req, res) => {
    if (options.hang === true) return;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(body);
  });
  server.on('connection', (s: Socket) => {
    state.connections += 1;
    sockets.add(s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Resolves every name to 127.0.0.1 and counts the lookups. */
function pinnedLookup(counter: { lookups: number }, address = '127.0.0.1'): LookupFunction {
  return ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    counter.lookups += 1;
    if (options.all === true) cb(null, [{ address, family: 4 }]);
    else cb(null, address, 4);
  }) as unknown as LookupFunction;
}

describe.each(ENGINES)('probes [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let me: SubjectHandle;
  beforeAll(async () => {
    t = await openTestEngine(kind, {
      probes: {
        roots: [tmp.dir],
        httpTimeoutMs: 300,
        instruments: [
          yesMan('yes-man'),
          {
            name: 'thrower',
            kind: 'file',
            run: async () => {
              throw new Error('boom');
            },
            controls: (ctx) => createFileInstrument().controls(ctx),
          },
        ],
      },
    });
    engine = t.engine;
    me = engine.subject();
    await engine.subjects.create();
  });
  afterAll(() => t.close());

  const fileSpec = (needle: string): ProbeSpec => ({
    kind: 'file',
    path: 'claims.txt',
    mode: 'contains',
    needle,
  });

  describe('records and calibration', () => {
    it('records every run, uncalibrated until calibrate runs', async () => {
      expect(await me.probes.isCalibrated('file')).toBe(false);
      const before = await me.probes.run(fileSpec('friday'), {
        purpose: 'check the deploy claim',
      });
      expect(before).toMatchObject({
        instrument: 'file',
        verdict: 'verified',
        errorCode: null,
        calibrated: false,
        calibrationId: null,
        subject: 'owner',
        purpose: 'check the deploy claim',
      });
      expect(await me.probes.get(before.id)).toEqual(before);
    });

    it('passes every built-in instrument with divergent controls', async () => {
      const results = await me.probes.calibrate();
      const builtIns = results.filter((r) => ['file', 'sql', 'http'].includes(r.instrument));
      expect(builtIns).toHaveLength(3);
      for (const r of builtIns) {
        expect(r).toMatchObject({ passed: true, positive: 'verified', negative: 'falsified' });
      }
      for (const name of ['file', 'sql', 'http']) {
        expect(await me.probes.isCalibrated(name)).toBe(true);
      }
      const after = await me.probes.run(fileSpec('friday'));
      expect(after.calibrated).toBe(true);
      expect(after.calibrationId).toBe(builtIns[0]?.calibrationId);
    });

    it('fails a yes-man instrument, and its runs are recorded uncalibrated', async () => {
      const [result] = await me.probes.calibrate({ instrument: 'yes-man' });
      expect(result).toMatchObject({ passed: false, positive: 'verified', negative: 'verified' });
      expect(await me.probes.isCalibrated('yes-man')).toBe(false);
      const record = await me.probes.run(fileSpec('a needle nowhere'), {
        instrument: 'yes-man',
      });
      expect(record).toMatchObject({ verdict: 'verified', calibrated: false });
      // The same claim through the calibrated instrument (control): falsified and trusted.
      const sound = await me.probes.run(fileSpec('a needle nowhere'));
      expect(sound).toMatchObject({ verdict: 'falsified', calibrated: true });
    });

    it('turns an instrument that throws into an error verdict and a failed calibration', async () => {
      const record = await me.probes.run(fileSpec('friday'), { instrument: 'thrower' });
      expect(record).toMatchObject({ verdict: 'error', errorCode: 'INSTRUMENT_FAILED' });
      const [result] = await me.probes.calibrate({ instrument: 'thrower' });
      expect(result).toMatchObject({ passed: false, positive: 'error', negative: 'error' });
    });

    it('refuses bad specs, unknown instruments and subjects without recording', async () => {
      const before = (await me.probes.log({ limit: 1000 })).length;
      const bad = { kind: 'file', path: 'claims.txt', mode: 'exists', negate: true };
      expect(await code(me.probes.run(bad as ProbeSpec))).toBe('INVALID_ARGUMENT');
      expect(await code(me.probes.run(fileSpec('x'), { instrument: 'nope' }))).toBe(
        'UNKNOWN_INSTRUMENT',
      );
      const sqlSpec: ProbeSpec = { kind: 'sql', query: 'SELECT 1', op: 'eq', expect: 1 };
      expect(await code(me.probes.run(sqlSpec, { instrument: 'file' }))).toBe('INVALID_ARGUMENT');
      expect(await code(engine.subject('nobody').probes.run(fileSpec('x')))).toBe(
        'SUBJECT_NOT_FOUND',
      );
      expect(await code(me.probes.isCalibrated('nope'))).toBe('UNKNOWN_INSTRUMENT');
      expect(await code(me.probes.log({ limit: 0 }))).toBe('INVALID_ARGUMENT');
      expect((await me.probes.log({ limit: 1000 })).length).toBe(before);
    });

    it('lists calibrations newest first, with their controls and verdicts', async () => {
      const [yes] = await me.probes.calibrations({ instrument: 'yes-man', limit: 1 });
      expect(yes).toMatchObject({
        instrument: 'yes-man',
        kind: 'file',
        passed: false,
        positive: 'verified',
        negative: 'verified',
        ranAt: expect.any(Date),
        detail: {
          positive: { spec: { kind: 'file', mode: 'contains' }, outcome: { verdict: 'verified' } },
          negative: { spec: { kind: 'file', mode: 'contains' }, outcome: { verdict: 'verified' } },
        },
      });
      const all = await me.probes.calibrations();
      expect(all.map((c) => c.instrument)).toEqual(
        expect.arrayContaining(['file', 'sql', 'http', 'yes-man']),
      );
      expect(all.find((c) => c.instrument === 'sql')).toMatchObject({
        passed: true,
        positive: 'verified',
        negative: 'falsified',
        fingerprint: 'memledger:sql:2',
      });
      expect(await code(me.probes.calibrations({ limit: 1001 }))).toBe('INVALID_ARGUMENT');
    });

    it('lists records newest first', async () => {
      const a = await me.probes.run(fileSpec('one'));
      const b = await me.probes.run(fileSpec('two'));
      const log = await me.probes.log({ limit: 2 });
      expect(log.map((r) => r.id)).toEqual([b.id, a.id]);
      await me.probes.run({ kind: 'sql', query: 'SELECT 1', op: 'eq', expect: 1 });
      const [newestFile] = await me.probes.log({ kind: 'file', limit: 1 });
      expect(newestFile?.id).toBe(b.id);
      const sqlOnly = await me.probes.log({ kind: 'sql' });
      expect(sqlOnly.length).toBeGreaterThan(0);
      expect(sqlOnly.every((r) => r.spec.kind === 'sql')).toBe(true);
      expect(await code(me.probes.log({ kind: 'shell' as 'sql' }))).toBe('INVALID_ARGUMENT');
      const { falsifiers } = createProbeModule({
        client: storeClient(engine),
        clock: () => new Date(),
        newId: randomUUID,
        config: resolveProbeConfig({ roots: [tmp.dir] }),
      });
      expect(falsifiers.instrumentFor(fileSpec('x'))).toBe('file');
    });
  });

  describe('the database holds the rules too', () => {
    it('keeps probe records and calibrations append-only', async () => {
      const [record] = await me.probes.log({ limit: 1 });
      await expect(
        storeClient(engine).query(`UPDATE probe_records SET verdict = 'verified' WHERE id = $1`, [
          record?.id,
        ]),
      ).rejects.toThrow(/append-only/);
      await expect(storeClient(engine).query('DELETE FROM probe_records')).rejects.toThrow(
        /append-only/,
      );
      await expect(storeClient(engine).query('DELETE FROM probe_calibrations')).rejects.toThrow(
        /append-only/,
      );
    });

    it('refuses a record that claims a calibration which did not pass', async () => {
      const insert = (calibrationId: string | null) =>
        storeClient(engine).query(
          `INSERT INTO probe_records (id, instrument, kind, spec, verdict, evidence, calibrated,
             calibration_id, ran_at) VALUES ($1, 'yes-man', 'file', '{}', 'verified', '{}', true, $2, now())`,
          [`forged-${Math.random()}`, calibrationId],
        );
      const { rows } = await storeClient(engine).query<{ id: string }>(
        `SELECT id FROM probe_calibrations WHERE instrument = 'yes-man' AND NOT passed LIMIT 1`,
      );
      await expect(insert(rows[0]?.id ?? null)).rejects.toThrow(/no passing calibration/);
      await expect(insert(null)).rejects.toThrow();
    });

    it('refuses a calibration marked passed whose controls did not diverge', async () => {
      const insert = (negative: string) =>
        storeClient(engine).query(
          `INSERT INTO probe_calibrations (id, instrument, kind, fingerprint, passed,
             positive_verdict, negative_verdict, detail, ran_at)
           VALUES ($1, 'forged', 'file', 'x', true, 'verified', $2, '{}', now())`,
          [`forged-${negative}`, negative],
        );
      await expect(insert('verified')).rejects.toThrow(/probe_calibrations_pass_is_divergence/);
      await expect(insert('falsified')).resolves.toBeDefined();
    });
  });

  describe('sql probes', () => {
    const sql = (query: string, op: string, expect: number) =>
      me.probes.run({ kind: 'sql', query, op, expect } as ProbeSpec);

    it('compares with each operator, each with its failing side', async () => {
      const q = 'SELECT count(*)::int FROM schema_migrations WHERE version <= 3';
      const cases: Array<[string, number, string]> = [
        ['eq', 3, 'verified'],
        ['eq', 4, 'falsified'],
        ['ne', 4, 'verified'],
        ['ne', 3, 'falsified'],
        ['lt', 4, 'verified'],
        ['lt', 3, 'falsified'],
        ['le', 3, 'verified'],
        ['le', 2, 'falsified'],
        ['gt', 2, 'verified'],
        ['gt', 3, 'falsified'],
        ['ge', 3, 'verified'],
        ['ge', 4, 'falsified'],
      ];
      // The operator is applied to the value the query read, outside the database: the whole
      // table runs on PostgreSQL; on PGlite, where each probe boots a snapshot of its own (about
      // a second), one operator's two sides run, the same query read the same way.
      for (const [op, expected, verdict] of kind === 'postgres' ? cases : cases.slice(0, 2)) {
        const r = await sql(q, op, expected);
        expect({ op, expected, verdict: r.verdict }).toEqual({ op, expected, verdict });
        expect(r.evidence).toEqual({ query: q, op, expect: expected, value: 3 });
      }
    });

    it('reads bigint and numeric results as numbers', async () => {
      expect((await sql('SELECT count(*) FROM schema_migrations', 'ge', 3)).verdict).toBe(
        'verified',
      );
      expect((await sql('SELECT 2.5::numeric', 'eq', 2.5)).verdict).toBe('verified');
    });

    it('refuses a write inside the read-only transaction and changes nothing', async () => {
      const before = (await me.probes.log({ limit: 1000 })).length;
      const del = await sql(
        'WITH gone AS (DELETE FROM subjects RETURNING 1) SELECT count(*)::int FROM gone',
        'eq',
        0,
      );
      expect(del).toMatchObject({ verdict: 'error', errorCode: 'READ_ONLY_VIOLATION' });
      const into = await sql('SELECT 1 AS n INTO probe_escape', 'eq', 1);
      expect(into).toMatchObject({ verdict: 'error', errorCode: 'READ_ONLY_VIOLATION' });
      const seq = await sql("SELECT nextval('probe_records_seq_seq')", 'ge', 0);
      // The probe role has no right on the sequence: refused before the read-only check.
      expect(seq).toMatchObject({
        verdict: 'error',
        errorCode: 'QUERY_FAILED',
        evidence: { sqlstate: '42501' },
      });
      const { rows } = await storeClient(engine).query<{ subjects: number; escape: string | null }>(
        `SELECT (SELECT count(*)::int FROM subjects) AS subjects,
                to_regclass('probe_escape')::text AS escape`,
      );
      expect(rows[0]).toEqual({ subjects: 1, escape: null });
      // The same query shape without the write runs (control).
      const read = await sql(
        'WITH kept AS (SELECT 1 FROM schema_migrations WHERE version = 1) SELECT count(*)::int FROM kept',
        'eq',
        1,
      );
      expect(read.verdict).toBe('verified');
      expect((await me.probes.log({ limit: 1000 })).length).toBe(before + 4);
    });

    it('refuses statements that are not one read before running anything', async () => {
      for (const query of [
        'DELETE FROM subjects',
        'CREATE TABLE probe_escape (n int)',
        'SELECT 1; DELETE FROM subjects',
        "COPY subjects TO PROGRAM 'true'",
      ]) {
        expect(await code(sql(query, 'eq', 0))).toBe('INVALID_ARGUMENT');
      }
      const { rows } = await storeClient(engine).query<{ n: number }>(
        `SELECT count(*)::int AS n FROM subjects`,
      );
      expect(rows[0]?.n).toBe(1);
    });

    it('leaves no setting behind: its own statement_timeout ends with the transaction', async () => {
      const show = async () =>
        (
          await storeClient(engine).query<{ t: string }>('SELECT current_setting($1) AS t', [
            'statement_timeout',
          ])
        ).rows[0]?.t;
      const before = await show();
      const r = await sql("SELECT length(current_setting('statement_timeout'))", 'gt', 0);
      expect(r.verdict).toBe('verified');
      expect(await show()).toBe(before);
      // A probe cannot change a setting itself: set_config is refused before it runs.
      const set = sql("SELECT length(set_config('search_path', 'pg_catalog', false))", 'gt', 0);
      expect(await code(set)).toBe('INVALID_ARGUMENT');
    });

    // Each denied function (docs/PROBES.md, "Sandboxing"), spelled the ways SQL allows.
    const DENIED: Array<[string, string]> = [
      [
        'pg_advisory_*',
        "SELECT count(*) FROM (SELECT pg_advisory_lock(hashtext('memledger.chain:owner'))) s",
      ],
      ['pg_advisory_*', 'SELECT count(*) FROM (SELECT "pg_advisory_lock"(1)) s'],
      ['pg_advisory_*', 'SELECT pg_catalog.PG_ADVISORY_XACT_LOCK_SHARED(1)::text::int'],
      ['pg_advisory_*', 'SELECT count(*) FROM (SELECT pg_advisory_unlock_all()) s'],
      ['pg_try_advisory_*', 'SELECT pg_try_advisory_lock(1)::int'],
      ['pg_read_file', "SELECT length(pg_read_file('/etc/hostname'))"],
      ['pg_read_file', 'SELECT length("pg_catalog"."pg_read_file"(\'/etc/hostname\'))'],
      ['pg_read_binary_file', "SELECT length(pg_read_binary_file('/etc/hostname'))"],
      ['pg_stat_file', "SELECT count(*) FROM pg_stat_file('/etc/hostname')"],
      ['pg_ls_*', "SELECT count(*) FROM pg_ls_dir('/')"],
      ['pg_ls_*', 'SELECT count(*) FROM pg_ls_waldir()'],
      ['pg_file_*', "SELECT pg_file_write('/tmp/x', 'y', false)::int"],
      ['lo_*', "SELECT lo_import('/etc/hostname')::int"],
      ['lo_*', 'SELECT length(lo_get(1))'],
      ['dblink*', "SELECT count(*) FROM dblink('dbname=postgres', 'SELECT 1') AS t(n int)"],
      ['dblink*', "SELECT length(dblink_connect('dbname=postgres'))"],
      ['pg_sleep*', 'SELECT count(*) FROM (SELECT pg_sleep(30)) s'],
      ['pg_sleep*', "SELECT count(*) FROM (SELECT Pg_Sleep_For('30 seconds')) s"],
      ['pg_sleep*', 'SELECT count(*) FROM (SELECT pg_sleep/* a comment */(30)) s'],
      ['pg_terminate_backend', 'SELECT pg_terminate_backend(1)::int'],
      ['pg_cancel_backend', 'SELECT pg_cancel_backend(1)::int'],
      ['pg_reload_conf', 'SELECT pg_reload_conf()::int'],
      ['pg_rotate_logfile', 'SELECT pg_rotate_logfile()::int'],
      ['set_config', "SELECT length(SET_CONFIG('work_mem', '1GB', false))"],
      ['pg_notify', "SELECT count(*) FROM (SELECT pg_notify('memledger', 'x')) s"],
      [
        'query_to_xml*',
        "SELECT length(query_to_xml('SELECT pg_' || 'sleep(30)', true, false, '')::text)",
      ],
      ['ts_stat', "SELECT count(*) FROM ts_stat('SELECT to_tsvector(''x'')')"],
      [
        'ts_rewrite',
        "SELECT length(ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, ''b''::tsquery')::text)",
      ],
      [
        'pg_logical_emit_message',
        "SELECT length(pg_logical_emit_message(false, 'memledger', 'x')::text)",
      ],
      ['U&"…"', 'SELECT count(*) FROM (SELECT U&"pg_sl\\0065ep"(30)) s'],
    ];

    it('covers every denied function in the refusal cases', () => {
      const covered = new Set(DENIED.map(([name]) => name));
      expect(DENIED_SQL_FUNCTIONS.filter((name) => !covered.has(name))).toEqual([]);
    });

    it('refuses a query that calls a denied function, before running it, recording nothing', async () => {
      const before = (await me.probes.log({ limit: 1000 })).length;
      for (const [name, query] of DENIED) {
        expect({ name, query, code: await code(sql(query, 'ge', 0)) }).toEqual({
          name,
          query,
          code: 'INVALID_ARGUMENT',
        });
      }
      expect((await me.probes.log({ limit: 1000 })).length).toBe(before);
    });

    it('still runs queries that only resemble a denied name (control)', async () => {
      const near = await sql(
        'SELECT length(\'pg_ls lo xlo_y set_configs my_pg_sleep pg_notifyx u& "x"\')',
        'gt',
        0,
      );
      expect(near).toMatchObject({ verdict: 'verified', errorCode: null });
      const setting = await sql("SELECT length(current_setting('search_path'))", 'gt', 0);
      expect(setting).toMatchObject({ verdict: 'verified', errorCode: null });
    });

    // Skipped on PGlite: one in-process connection, no pooled session a lock could leak into.
    it.runIf(kind === 'postgres')(
      'leaves no advisory lock behind after a refused lock probe',
      async () => {
        const key = randomInt(1, 2 ** 31 - 1);
        const held = async () =>
          (
            await storeClient(engine).query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks
                WHERE locktype = 'advisory' AND classid = 0 AND objid = $1::bigint::oid
                  AND objsubid = 1`,
              [key],
            )
          ).rows[0]?.n;
        const probe = sql(`SELECT count(*) FROM (SELECT pg_advisory_lock(${key})) s`, 'eq', 1);
        expect(await code(probe)).toBe('INVALID_ARGUMENT');
        expect(await held()).toBe(0);
        // Control: the same check sees the lock while another session holds it.
        const other = new pg.Client({ connectionString: PG_URL });
        await other.connect();
        try {
          await other.query('SELECT pg_advisory_lock($1::bigint)', [key]);
          expect(await held()).toBe(1);
          await other.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
        } finally {
          await other.end();
        }
        expect(await held()).toBe(0);
      },
    );

    // What a cost bound checked before running (EXPLAIN) would let through, since the planner
    // guesses their rows: a recursive CTE, a set-returning function of a column. PostgreSQL stops
    // them at statement_timeout; PGlite stops the snapshot they run on.
    const SLOW = [
      'SELECT count(*) FROM generate_series(1, 1000000000)',
      'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) SELECT count(*) FROM n',
      'SELECT count(*) FROM generate_series(1, 100000) a, LATERAL generate_series(1, a) b',
    ];

    it('stops a slow query at sqlTimeoutMs, however the planner guesses its cost', async () => {
      // an engine with a short limit on this store, for a subject of its own
      const slow = await engineBeside(t, { probes: { roots: [tmp.dir], sqlTimeoutMs: 100 } });
      try {
        await slow.subjects.create('slow');
        const run = (query: string) =>
          slow.subject('slow').probes.run({ kind: 'sql', query, op: 'ge', expect: 0 });
        for (const query of SLOW) {
          const r = await run(query);
          expect({ query, verdict: r.verdict, code: r.errorCode }).toEqual({
            query,
            verdict: 'error',
            code: 'TIMEOUT',
          });
        }
        // Why no cost bound: the planner takes the recursive CTE's 1e9 rows for 31, and the
        // lateral join's 5e9 for 1e8.
        const guessed = async (query: string) => {
          const { rows } = await storeClient(slow).query<{ 'QUERY PLAN': unknown }>(
            `EXPLAIN (FORMAT JSON) ${query}`,
          );
          const plan = rows[0]?.['QUERY PLAN'];
          const top = (typeof plan === 'string' ? JSON.parse(plan) : plan) as Array<{
            Plan: { Plans?: Array<{ 'Plan Rows': number }> };
          }>;
          return top[0]?.Plan.Plans?.[0]?.['Plan Rows'] ?? 0;
        };
        expect(await guessed(SLOW[0] as string)).toBeGreaterThan(1e8);
        expect(await guessed(SLOW[1] as string)).toBeLessThan(1000);
        expect(await guessed(SLOW[2] as string)).toBeLessThanOrEqual(1e8);
        // The same engine answers a quick query (control).
        const quick = await run('SELECT count(*) FROM generate_series(1, 10)');
        expect(quick).toMatchObject({ verdict: 'verified', evidence: { value: 10 } });
      } finally {
        await slow.close();
      }
    });

    it('gives BAD_RESULT and QUERY_FAILED as errors, not verdicts', async () => {
      const shape = await sql('SELECT 1, 2', 'eq', 1);
      expect(shape).toMatchObject({ verdict: 'error', errorCode: 'BAD_RESULT' });
      const none = await sql('SELECT 1 WHERE false', 'eq', 1);
      expect(none).toMatchObject({ verdict: 'error', errorCode: 'BAD_RESULT' });
      const text = await sql("SELECT 'three'", 'eq', 3);
      expect(text).toMatchObject({ verdict: 'error', errorCode: 'BAD_RESULT' });
      const failed = await sql('SELECT count(*) FROM no_such_table', 'eq', 0);
      expect(failed).toMatchObject({
        verdict: 'error',
        errorCode: 'QUERY_FAILED',
        evidence: { sqlstate: '42P01' },
      });
    });
  });

  describe('http probes', () => {
    let server: CountingServer;
    beforeAll(async () => {
      server = await countingServer('status: deployed\ndeployed twice, deployed\n');
    });
    afterAll(() => server.close());
    const http = (spec: Omit<Extract<ProbeSpec, { kind: 'http' }>, 'kind'>) =>
      me.probes.run({ kind: 'http', ...spec });

    it('compares status and body on a loopback server, each with its failing side', async () => {
      const hit = await http({ url: `${server.url}/x`, status: 200, contains: 'deployed' });
      expect(hit).toMatchObject({
        verdict: 'verified',
        evidence: { status: 200, matchCount: 3, bodyBytes: 42, expectStatus: 200 },
      });
      expect((await http({ url: `${server.url}/x`, contains: 'rolled back' })).verdict).toBe(
        'falsified',
      );
      expect((await http({ url: `${server.url}/x`, status: 404 })).verdict).toBe('falsified');
      expect((await http({ url: `${server.url}/x`, status: 200 })).verdict).toBe('verified');
    });

    it('refuses a host that is not loopback or allowlisted, before any lookup', async () => {
      const r = await http({ url: 'http://example.invalid/', status: 200 });
      expect(r).toMatchObject({ verdict: 'error', errorCode: 'NOT_ALLOWED' });
      const wildcard = await http({ url: 'http://0.0.0.0:1/', status: 200 });
      expect(wildcard).toMatchObject({ verdict: 'error', errorCode: 'NOT_ALLOWED' });
    });

    it('times out on a server that never answers', async () => {
      const hang = await countingServer('', { hang: true });
      try {
        const r = await http({ url: `${hang.url}/slow`, status: 200 });
        expect(r).toMatchObject({ verdict: 'error', errorCode: 'TIMEOUT' });
        expect(hang.connections).toBe(1);
      } finally {
        await hang.close();
      }
    });

    it('reports a refused connection as CONNECTION_FAILED', async () => {
      const gone = await countingServer('');
      await gone.close();
      const r = await http({ url: `${gone.url}/`, status: 200 });
      expect(r).toMatchObject({ verdict: 'error', errorCode: 'CONNECTION_FAILED' });
    });
  });
});

describe.each(ONE_ENGINE)('http probe allowlist, proven by a counting server [%s]', (kind) => {
  let server: CountingServer;
  /** The store each test's engine opens, with a subject of its own. */
  let base: TestEngine;
  let subjects = 0;
  beforeAll(async () => {
    server = await countingServer('allowlisted answer\n');
    base = await openTestEngine(kind);
  });
  afterAll(async () => {
    await server.close();
    await base.close();
  });

  /** An engine whose http instrument resolves every name to the counting server's address. */
  async function withPinned(
    allow: string[],
    fn: (me: SubjectHandle, counter: { lookups: number }) => Promise<void>,
  ): Promise<void> {
    const counter = { lookups: 0 };
    const engine = await engineBeside(base, {
      probes: {
        roots: [tmp.dir],
        httpAllowlist: allow,
        instruments: [createHttpInstrument({ lookup: pinnedLookup(counter) })],
      },
    });
    try {
      const id = `pinned-${++subjects}`;
      await engine.subjects.create(id);
      await fn(engine.subject(id), counter);
    } finally {
      await engine.close();
    }
  }
  const port = () => new URL(server.url).port;

  it('refuses a non-allowlisted host with no lookup and no connection', async () => {
    await withPinned([], async (me, counter) => {
      const before = server.connections;
      const r = await me.probes.run({
        kind: 'http',
        url: `http://example.invalid:${port()}/`,
        contains: 'allowlisted',
      });
      expect(r).toMatchObject({ verdict: 'error', errorCode: 'NOT_ALLOWED' });
      expect(counter.lookups).toBe(0);
      expect(server.connections).toBe(before);
    });
  });

  it('reaches the same server by the same name once the name is allowlisted (control)', async () => {
    await withPinned(['EXAMPLE.invalid'], async (me, counter) => {
      const before = server.connections;
      const r = await me.probes.run({
        kind: 'http',
        url: `http://example.invalid:${port()}/`,
        contains: 'allowlisted',
      });
      expect(r).toMatchObject({ verdict: 'verified', evidence: { matchCount: 1 } });
      expect(counter.lookups).toBe(1);
      expect(server.connections).toBe(before + 1);
    });
  });

  it('refuses localhost when it resolves to a non-loopback address', async () => {
    const counter = { lookups: 0 };
    const engine = await engineBeside(base, {
      probes: {
        roots: [tmp.dir],
        instruments: [createHttpInstrument({ lookup: pinnedLookup(counter, '192.0.2.1') })],
      },
    });
    try {
      const id = `pinned-${++subjects}`;
      await engine.subjects.create(id);
      const r = await engine.subject(id).probes.run({
        kind: 'http',
        url: 'http://localhost:9/',
        status: 200,
      });
      expect(r).toMatchObject({ verdict: 'error', errorCode: 'NOT_ALLOWED' });
      expect(counter.lookups).toBe(1);
    } finally {
      await engine.close();
    }
  });
});

describe.each(ENGINES)('calibration belongs to one implementation [%s]', (kind) => {
  it('does not let a replacement inherit the built-in file calibration', async () => {
    const store =
      kind === 'pglite'
        ? { db: join(tmp.dir, 'store'), cleanup: async () => undefined }
        : testStore(kind);
    try {
      const first = await createEngine({ db: store.db, probes: { roots: [tmp.dir] } });
      await first.subjects.create();
      await first.subject().probes.calibrate({ instrument: 'file' });
      expect(await first.subject().probes.isCalibrated('file')).toBe(true);
      await first.close();

      const second = await createEngine({
        db: store.db,
        create: false,
        probes: { roots: [tmp.dir], instruments: [yesMan('file')] },
      });
      expect(await second.subject().probes.isCalibrated('file')).toBe(false);
      const r = await second
        .subject()
        .probes.run({ kind: 'file', path: 'claims.txt', mode: 'exists' });
      expect(r).toMatchObject({ verdict: 'verified', calibrated: false });
      const [result] = await second.subject().probes.calibrate({ instrument: 'file' });
      expect(result?.passed).toBe(false);
      await second.close();

      // The built-in, reopened, still has its own passing calibration (control).
      const third = await createEngine({
        db: store.db,
        create: false,
        probes: { roots: [tmp.dir] },
      });
      expect(await third.subject().probes.isCalibrated('file')).toBe(true);
      await third.close();
      expect(await code(third.subject().probes.log())).toBe('ENGINE_CLOSED');
    } finally {
      await store.cleanup();
    }
  });

  it('refuses a bad probe configuration before opening a store', async () => {
    // roots: [] is valid (no directory: every file probe is PATH_OUTSIDE_ROOTS); an empty name is not
    expect(await code(createEngine({ db: 'memory://', probes: { roots: [''] } }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      await code(createEngine({ db: 'memory://', probes: { instruments: [yesMan('sql')] } })),
    ).toBe('INVALID_ARGUMENT');
    expect(await code(createEngine({ db: 'memory://', probes: { httpTimeoutMs: 0 } }))).toBe(
      'INVALID_ARGUMENT',
    );
  });
});

describe('the sql instrument run on its own', () => {
  it('refuses a denied function before it reaches the database', async () => {
    const queried: string[] = [];
    const sql = {
      query: async (text: string) => {
        queried.push(text);
        return { rows: [] };
      },
      transaction: async (fn: (tx: unknown) => Promise<unknown>) => fn(sql),
    };
    const ctx = fileContext([tmp.dir], { sql: sql as unknown as ReadOnlySql });
    const run = (query: string) =>
      createSqlInstrument().run({ kind: 'sql', query, op: 'eq', expect: 1 }, ctx);
    expect(await code(run("SELECT length(pg_read_file('/etc/hostname'))"))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(queried).toEqual([]);
    // The same instrument sends a harmless query on (control).
    await run('SELECT 1');
    expect(queried).toContain('SELECT 1');
  });
});
