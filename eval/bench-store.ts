import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createEngine, EngineError, type Engine, type EngineConfig } from '../src/index.js';

/** The engines a benchmark can run on. */
export const BENCH_KINDS = ['pglite', 'postgres'] as const;
export type BenchKind = (typeof BENCH_KINDS)[number];

/** The PostgreSQL server the benchmarks use (each run in a schema of its own). */
export const PG_URL = process.env.MEMLEDGER_BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The URL with its password masked, for messages. */
export function redacted(url: string): string {
  const u = new URL(url);
  if (u.password !== '') u.password = '***';
  return u.toString();
}

/** A plain `pg` connection to PG_URL for the length of `fn` (schema set-up and clean-up). */
export async function withPgClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A fresh store (a new PGlite instance, or a new PostgreSQL schema named `<prefix>_<pid>_<hex>`),
 * closed and dropped even on failure. A failed drop is reported, not thrown, so it never hides
 * the error that got us there. PGlite lives in memory (`memory://`) unless `pgliteDir`: then in a
 * new data directory under the system's temporary directory, as a user's store lives on disk
 * (`./.memledger`), removed afterwards.
 */
export async function withBenchStore<T>(
  kind: BenchKind,
  prefix: string,
  fn: (engine: Engine) => Promise<T>,
  config: Omit<EngineConfig, 'db'> = {},
  options: { pgliteDir?: boolean } = {},
): Promise<T> {
  const schema =
    kind === 'postgres' ? `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}` : null;
  const dir =
    kind === 'pglite' && options.pgliteDir === true
      ? mkdtempSync(join(tmpdir(), `${prefix}-`))
      : null;
  const db =
    schema !== null
      ? `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`
      : dir !== null
        ? join(dir, 'store')
        : 'memory://';
  try {
    const engine = await createEngine({ ...config, db });
    try {
      return await fn(engine);
    } finally {
      await engine.close();
    }
  } finally {
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
    if (schema !== null) {
      await withPgClient((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).catch(
        (err: Error) => console.error(`${prefix}: could not drop ${schema}: ${err.message}`),
      );
    }
  }
}

/**
 * Parses `--engines pglite,postgres`, and fails before any long run when PostgreSQL is asked
 * for but cannot be reached.
 */
export async function benchKinds(engines: string): Promise<BenchKind[]> {
  const kinds = engines
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  for (const k of kinds) {
    if (!(BENCH_KINDS as readonly string[]).includes(k)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `unknown engine "${k}" (${BENCH_KINDS.join(', ')})`,
      );
    }
  }
  if (kinds.includes('postgres')) {
    await withPgClient((c) => c.query('SELECT 1')).catch((err: Error) => {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `PostgreSQL is not reachable at ${redacted(PG_URL)} (${err.message}); ` +
          'start it, set MEMLEDGER_BENCH_PG, or pass --engines pglite',
      );
    });
  }
  return kinds as BenchKind[];
}
