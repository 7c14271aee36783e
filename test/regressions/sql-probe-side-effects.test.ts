// Issue 12, problem 5: `probe sql` ran with the store's own rights, so a read-only transaction
// still let `pg_create_physical_replication_slot('x', true)` leave a slot holding WAL forever, and
// pg_stat_reset(), pg_switch_wal() and pg_create_restore_point() ran; any probe could also read
// every subject's facts. Probes now run as the memledger_probe role (migration 10), so PostgreSQL
// refuses what that role may not do, whatever the parser lets through.
import { randomBytes, randomInt } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type ProbeSpec, type SubjectHandle } from '../../src/index.js';
import { storeClient } from '../../src/engine/test-access.js';
import { PROBE_ROLE } from '../../src/store/migrations/0010-probe-role.js';
import { readOnlySql, type ReadOnlySql } from '../../src/store/read-only-sql.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { ENGINES, openTestEngine, PG_URL, type TestEngine } from '../support/engines.js';
import { code } from '../support/errors.js';
import { tempDir } from '../support/probe-fixtures.js';

const tmp = tempDir('memledger-sql-side-effects-');
afterAll(tmp.cleanup);

/** The SQLSTATE a rejected statement carries. */
async function sqlstate(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return String((err as { code?: unknown }).code);
  }
  return 'succeeded';
}

describe.each(ENGINES)('sql probes run as a role that cannot touch the server [%s]', (kind) => {
  let t: TestEngine;
  let me: SubjectHandle;
  let store: SqlClient;
  /** The reader instruments get, asked to run as the probe role: no parser in front of it. */
  let asProbe: ReadOnlySql;
  const slot = `memledger_test_${randomBytes(4).toString('hex')}`;
  const sql = (query: string, op: string, expect: number) =>
    me.probes.run({ kind: 'sql', query, op, expect } as ProbeSpec);
  const count = async (query: string, params: unknown[] = []) =>
    (await store.query<{ n: number }>(query, params)).rows[0]?.n;

  beforeAll(async () => {
    t = await openTestEngine(kind, { probes: { roots: [tmp.dir] } });
    store = storeClient(t.engine);
    asProbe = readOnlySql(store, { role: PROBE_ROLE });
    await t.engine.subjects.create();
    me = t.engine.subject();
    // Another subject with a turn and a pending fact, which owner's probes must not read.
    await t.engine.subjects.create('bob');
    const bob = t.engine.subject('bob');
    const session = await bob.sessions.create({ title: 'travel' });
    await bob.turns.add({
      sessionId: session.id,
      role: 'user',
      content: 'I fly to Lisbon on Friday.',
    });
    await bob.gate.propose({
      sessionId: session.id,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'Bob flies to Lisbon on Friday.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I fly to Lisbon on Friday' },
        },
      ],
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('made the probe role with no attribute a probe could abuse', async () => {
    const { rows } = await store.query<Record<string, boolean>>(
      `SELECT rolsuper, rolreplication, rolbypassrls, rolcreaterole, rolcreatedb, rolcanlogin,
              EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.member = r.oid) AS member
         FROM pg_roles r WHERE rolname = $1`,
      [PROBE_ROLE],
    );
    expect(rows).toEqual([
      {
        rolsuper: false,
        rolreplication: false,
        rolbypassrls: false,
        rolcreaterole: false,
        rolcreatedb: false,
        rolcanlogin: false,
        member: false,
      },
    ]);
  });

  it('refuses the server-changing functions the parser lets through, leaving nothing behind', async () => {
    const statsReset = () =>
      store.query<{ at: string | null }>(
        'SELECT stats_reset::text AS at FROM pg_stat_database WHERE datname = current_database()',
      );
    const resetBefore = (await statsReset()).rows[0]?.at;
    const cases = [
      `SELECT count(*) FROM pg_create_physical_replication_slot('${slot}', true)`,
      'SELECT count(*) FROM (SELECT pg_stat_reset()) s',
      'SELECT length(pg_switch_wal()::text)',
      "SELECT length(pg_create_restore_point('memledger')::text)",
    ];
    for (const query of cases) {
      const r = await sql(query, 'ge', 0);
      expect({ query, verdict: r.verdict, code: r.errorCode, state: r.evidence.sqlstate }).toEqual({
        query,
        verdict: 'error',
        code: 'QUERY_FAILED',
        state: '42501',
      });
    }
    const slots = 'SELECT count(*)::int AS n FROM pg_replication_slots WHERE slot_name = $1';
    expect(await count(slots, [slot])).toBe(0);
    expect((await statsReset()).rows[0]?.at).toBe(resetBefore);
  });

  // Control for the slot check: a slot made with the store's own (superuser) rights is seen.
  // PGlite runs single-user and has no replication slots to make.
  it.runIf(kind === 'postgres')('sees a replication slot that does exist (control)', async () => {
    const slots = 'SELECT count(*)::int AS n FROM pg_replication_slots WHERE slot_name = $1';
    const other = `${slot}_control`;
    await store.query('SELECT pg_create_physical_replication_slot($1)', [other]);
    try {
      expect(await count(slots, [other])).toBe(1);
    } finally {
      await store.query('SELECT pg_drop_replication_slot($1)', [other]);
    }
    expect(await count(slots, [other])).toBe(0);
  });

  it('keeps the parser refusals as a first line', async () => {
    for (const query of [
      "SELECT length(pg_read_file('/etc/hostname'))",
      "SELECT count(*) FROM pg_ls_dir('.')",
      "SELECT lo_import('/etc/hostname')::int",
      "SELECT length(set_config('log_statement', 'all', true))",
      'SELECT count(*) FROM (SELECT pg_advisory_lock(1)) s',
    ]) {
      expect({ query, code: await code(sql(query, 'ge', 0)) }).toEqual({
        query,
        code: 'INVALID_ARGUMENT',
      });
    }
  });

  it('has PostgreSQL refuse file, large-object and superuser-setting functions past the parser', async () => {
    const cases = [
      "SELECT length(pg_read_file('PG_VERSION'))",
      "SELECT count(*) FROM pg_ls_dir('.')",
      "SELECT lo_import('/etc/hostname')::int",
      "SELECT length(set_config('log_statement', 'all', true))",
    ];
    for (const query of cases) {
      expect({ query, state: await sqlstate(asProbe.query(query)) }).toEqual({
        query,
        state: '42501',
      });
    }
    // Control: the same reader without the role (the store's superuser) lists the directory.
    const { rows } = await readOnlySql(store).query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_ls_dir('.')",
    );
    expect(rows[0]?.n).toBeGreaterThan(0);
  });

  it('releases a session advisory lock taken past the parser, even by a failing statement', async () => {
    const key = randomInt(1, 2 ** 31 - 1);
    const held = `SELECT count(*)::int AS n FROM pg_locks
                   WHERE locktype = 'advisory' AND classid = 0 AND objid = $1::bigint::oid
                     AND objsubid = 1`;
    const taken = await asProbe.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT pg_advisory_lock(${key}::bigint)) s`,
    );
    expect(taken.rows[0]?.n).toBe(1);
    expect(await count(held, [key])).toBe(0);
    // The lock is taken on each row before the sum divides by zero on the second.
    const failing = asProbe.query(
      `SELECT sum(x / (1 - x)) FROM (SELECT x, pg_advisory_lock(${key}::bigint) AS l
                                      FROM generate_series(0, 1) x) s`,
    );
    expect(await sqlstate(failing)).toBe('22012');
    expect(await count(held, [key])).toBe(0);
    // Control: the same check sees the lock while a session holds it.
    await store.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_lock($1::bigint)', [key]);
      const inside = await tx.query<{ n: number }>(held, [key]);
      await tx.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
      expect(inside.rows[0]?.n).toBe(1);
    });
  });

  it("refuses a statement that leaves the role (set_config('role'), past the parser)", async () => {
    const escape = asProbe.query("SELECT length(set_config('role', session_user, true))");
    expect(await code(escape)).toBe('PROBE_ROLE_MISSING');
    // Control: the same shape without leaving the role runs.
    const stay = await asProbe.query<{ n: number }>(
      "SELECT length(set_config('application_name', 'x', true))::int AS n",
    );
    expect(stay.rows[0]?.n).toBe(1);
  });

  it("cannot read another subject's facts, turns or decisions, nor any memledger table but schema_migrations", async () => {
    expect(await count("SELECT count(*)::int AS n FROM facts WHERE subject_id = 'bob'")).toBe(1);
    expect(await count("SELECT count(*)::int AS n FROM turns WHERE subject_id = 'bob'")).toBe(1);
    for (const query of [
      "SELECT count(*) FROM facts WHERE subject_id = 'bob'",
      "SELECT count(*) FROM turns WHERE subject_id = 'bob'",
      'SELECT count(*) FROM decisions',
    ]) {
      const r = await sql(query, 'ge', 0);
      expect({ query, verdict: r.verdict, state: r.evidence.sqlstate }).toEqual({
        query,
        verdict: 'error',
        state: '42501',
      });
    }
    const { rows } = await store.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`,
    );
    const tables = rows.map((r) => r.name);
    expect(tables).toEqual(expect.arrayContaining(['facts', 'turns', 'decisions', 'subjects']));
    const readable: string[] = [];
    for (const table of tables) {
      const state = await sqlstate(asProbe.query(`SELECT count(*) FROM "${table}"`));
      if (state !== '42501') readable.push(table);
    }
    expect(readable).toEqual(['schema_migrations']);
  });

  it('reads a host table the host granted, with both verdicts', async () => {
    await store.exec(`CREATE TABLE host_inventory (item text);
      INSERT INTO host_inventory VALUES ('a'), ('b'), ('c');
      CREATE TABLE host_private (item text);
      INSERT INTO host_private VALUES ('x');
      GRANT SELECT ON host_inventory TO ${PROBE_ROLE};`);
    const q = 'SELECT count(*)::int FROM host_inventory';
    expect(await sql(q, 'eq', 3)).toMatchObject({ verdict: 'verified', evidence: { value: 3 } });
    expect(await sql(q, 'eq', 4)).toMatchObject({ verdict: 'falsified', evidence: { value: 3 } });
    // A host table nobody granted stays closed.
    const closed = await sql('SELECT count(*)::int FROM host_private', 'eq', 1);
    expect(closed).toMatchObject({ verdict: 'error', evidence: { sqlstate: '42501' } });
  });

  it('calibrates the sql instrument under the role', async () => {
    const [result] = await me.probes.calibrate({ instrument: 'sql' });
    expect(result).toMatchObject({ passed: true, positive: 'verified', negative: 'falsified' });
    // Control: the same positive control read with the store's own rights finds no row.
    const { rows } = await readOnlySql(store).query<{ n: number }>(
      `SELECT count(*)::int AS n FROM schema_migrations WHERE version = 1 AND current_user = '${PROBE_ROLE}'`,
    );
    expect(rows[0]?.n).toBe(0);
  });

  // PGlite is a private cluster, so the role may be altered there without touching other stores.
  it.runIf(kind === 'pglite')('refuses a probe role that was given more rights', async () => {
    const probe = () => sql('SELECT count(*)::int FROM schema_migrations', 'ge', 1);
    for (const [grant, revoke] of [
      [`ALTER ROLE ${PROBE_ROLE} SUPERUSER`, `ALTER ROLE ${PROBE_ROLE} NOSUPERUSER`],
      [`ALTER ROLE ${PROBE_ROLE} REPLICATION`, `ALTER ROLE ${PROBE_ROLE} NOREPLICATION`],
      [
        `GRANT pg_read_server_files TO ${PROBE_ROLE}`,
        `REVOKE pg_read_server_files FROM ${PROBE_ROLE}`,
      ],
    ] as const) {
      await store.exec(grant);
      try {
        expect({ grant, r: await probe() }).toMatchObject({
          grant,
          r: { verdict: 'error', errorCode: 'PROBE_ROLE_MISSING' },
        });
      } finally {
        await store.exec(revoke);
      }
      expect({ revoke, verdict: (await probe()).verdict }).toEqual({ revoke, verdict: 'verified' });
    }
  });
});

// Roles are per cluster: a user that may not create roles still opens and migrates a store, and
// its sql probes say PROBE_ROLE_MISSING. Only on PostgreSQL: PGlite always runs as a superuser.
describe('a store whose user may not create or enter the probe role [postgres]', () => {
  const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const user = `mlt_plain_${suffix}`;
  const schema = `mlt_plain_${suffix}`;
  const admin = new pg.Client({ connectionString: PG_URL });

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE ROLE ${user} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB`);
    await admin.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${user}`);
  });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`DROP OWNED BY ${user}`);
    await admin.query(`DROP ROLE IF EXISTS ${user}`);
    await admin.end();
  });

  it('opens and migrates, and its sql probes answer PROBE_ROLE_MISSING', async () => {
    const url = new URL(PG_URL);
    url.username = user;
    url.searchParams.set('schema', schema);
    const engine = await createEngine({ db: url.toString(), probes: { roots: [tmp.dir] } });
    try {
      await engine.subjects.create();
      const r = await engine.subject().probes.run({
        kind: 'sql',
        query: 'SELECT count(*)::int FROM schema_migrations',
        op: 'ge',
        expect: 1,
      });
      expect(r).toMatchObject({ verdict: 'error', errorCode: 'PROBE_ROLE_MISSING' });
      expect(r.evidence.message).toMatch(/memledger_probe/);
      const applied = await storeClient(engine).query<{ n: number }>(
        'SELECT count(*)::int AS n FROM schema_migrations WHERE version = 10',
      );
      expect(applied.rows[0]?.n).toBe(1);
      // Control: once an administrator lets the user enter the role, the same probe runs.
      await admin.query(`GRANT ${PROBE_ROLE} TO ${user}`);
      const again = await engine.subject().probes.run({
        kind: 'sql',
        query: 'SELECT count(*)::int FROM schema_migrations',
        op: 'ge',
        expect: 1,
      });
      expect(again.verdict).toBe('verified');
    } finally {
      await engine.close();
    }
  });
});
