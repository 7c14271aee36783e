import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { engineOver } from '../../src/engine.js';
import { storeClient } from '../../src/engine/test-access.js';
import { createEngine, EngineError, type Engine, type EngineConfig } from '../../src/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';

/** The PostgreSQL server the suite runs against; every test file gets its own schema. */
export const PG_URL = process.env.MEMLEDGER_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

export const ENGINES = ['pglite', 'postgres'] as const;
export type EngineKind = (typeof ENGINES)[number];

/**
 * The one engine a suite runs on when what it asserts is decided before any engine-specific SQL
 * (validation, rendering, option parsing, role tables, error mapping): PGlite, the default a user
 * runs. docs/ARCHITECTURE.md (Testing) says which tests run on both.
 */
export const ONE_ENGINE = ['pglite'] as const satisfies readonly EngineKind[];

/**
 * The engines a file of QUIET_FILES (vitest.config.ts) runs on in this project: PGlite with the
 * rest of the suite, PostgreSQL in the `quiet` project, alone on the server.
 */
export function quietEngines(): readonly EngineKind[] {
  return QUIET_RUN ? ['postgres'] : ['pglite'];
}

/** True in the `quiet` project: only the PostgreSQL half of a QUIET_FILES file is registered. */
export const QUIET_RUN = process.env.MEMLEDGER_TEST_QUIET === '1';

export function uniqueSchema(): string {
  return `mlt_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export function pgUrlWithSchema(schema: string): string {
  return `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

export interface TestStore {
  kind: EngineKind;
  /** The `--db` value naming this store. */
  db: string;
  cleanup(): Promise<void>;
}

let storeDirs = 0;

/**
 * A fresh store location of the given kind: a PostgreSQL schema, or `memory://`; with `under`, a
 * new PGlite directory there instead, one another process can open once this one closes it.
 */
export function testStore(kind: EngineKind, under?: string): TestStore {
  if (kind === 'pglite') {
    const db = under === undefined ? 'memory://' : join(under, `db-${++storeDirs}`);
    return { kind, db, cleanup: async () => undefined };
  }
  const schema = uniqueSchema();
  return { kind, db: pgUrlWithSchema(schema), cleanup: () => dropSchema(schema) };
}

export interface TestEngine {
  engine: Engine;
  db: string;
  close(): Promise<void>;
}

export async function openTestEngine(
  kind: EngineKind,
  config: Omit<EngineConfig, 'db'> = {},
): Promise<TestEngine> {
  const store = testStore(kind);
  const engine = await createEngine({ ...config, db: store.db });
  return {
    engine,
    db: store.db,
    async close() {
      await engine.close();
      await store.cleanup();
    },
  };
}

/** The client as an engine sees it, but left open when that engine closes. */
export function leftOpen(client: SqlClient): SqlClient {
  return {
    kind: client.kind,
    location: client.location,
    capabilities: client.capabilities,
    query: (sql, params) => client.query(sql, params),
    exec: (sql) => client.exec(sql),
    transaction: (fn) => client.transaction(fn),
    ...(client.snapshot === undefined ? {} : { snapshot: () => client.snapshot!() }),
    close: async () => undefined,
  };
}

/**
 * Another engine on the store of `t`, with a config of its own, as another process opens that
 * store: on PGlite over the same client (closing the engine leaves the client open), on
 * PostgreSQL on the same schema. For a test that needs an engine configured otherwise (a clock,
 * probes, blocks) but no empty store: it takes a subject of its own in this one.
 */
export function engineBeside(
  t: TestEngine,
  config: Omit<EngineConfig, 'db' | 'create' | 'shared'> = {},
): Promise<Engine> {
  if (t.db !== 'memory://') return createEngine({ ...config, db: t.db });
  return engineOver(leftOpen(storeClient(t.engine)), config);
}

/** Opens and closes the store at `db`: 'OPENED', or the code it was refused with. */
export async function openCode(db: string, create: boolean): Promise<string> {
  try {
    const engine = await createEngine({ db, create });
    await engine.close();
  } catch (err) {
    if (err instanceof EngineError) return err.code;
    throw err;
  }
  return 'OPENED';
}
