import { createHash } from 'node:crypto';
import pg from 'pg';
import { EngineError } from '../domain/errors.js';
import type {
  QueryOptions,
  QueryResult,
  SqlCapabilities,
  SqlClient,
  SqlExecutor,
} from '../store/sql-client.js';

export interface PostgresOpenOptions {
  /** `postgres://…`; an optional `?schema=name` keeps memledger in its own schema. */
  url: string;
  create: boolean;
  maxConnections?: number;
}

const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

function redact(url: URL): string {
  const copy = new URL(url.toString());
  if (copy.password !== '') copy.password = '***';
  return copy.toString();
}

const statementNames = new Map<string, string>();

/** A prepared statement's name: derived from its text, so every connection agrees on it. */
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `memledger_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  return name;
}

function executor(client: pg.Pool | pg.PoolClient): SqlExecutor {
  return {
    async query<T>(
      sql: string,
      params: readonly unknown[] = [],
      options: QueryOptions = {},
    ): Promise<QueryResult<T>> {
      const values = params as unknown[];
      const result =
        options.prepare === true
          ? await client.query({ name: statementName(sql), text: sql, values })
          : options.oneStatement === true
            ? // pg runs text with no values by the simple protocol, which takes statement lists;
              // `queryMode` (in pg, not yet in its types) forces the extended one.
              await client.query({ text: sql, values, queryMode: 'extended' } as pg.QueryConfig)
            : await client.query(sql, values);
      return { rows: result.rows as T[], columns: result.fields.map((f) => f.name) };
    },
    async exec(sql: string): Promise<void> {
      await client.query(sql);
    },
  };
}

/** `version` (as `0.8.1`) is at least `min`; null is not. */
function atLeast(version: string | null, min: readonly number[]): boolean {
  if (version === null) return false;
  const parts = version.split('.').map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < min.length; i++) {
    const a = parts[i] ?? 0;
    const b = min[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

export class PostgresClient implements SqlClient {
  readonly kind = 'postgres' as const;
  readonly capabilities: SqlCapabilities;
  private readonly root: SqlExecutor;

  private constructor(
    private readonly pool: pg.Pool,
    readonly location: string,
    vectorType: boolean,
  ) {
    this.root = executor(pool);
    this.capabilities = {
      concurrentConnections: true,
      autovacuum: true,
      vectorType,
      roundTrips: true,
      stopsStatements: true,
    };
  }

  static async open(options: PostgresOpenOptions): Promise<PostgresClient> {
    let url: URL;
    try {
      url = new URL(options.url);
    } catch (err) {
      throw new EngineError('DB_UNUSABLE', `not a valid PostgreSQL URL: ${options.url}`, {
        cause: err,
      });
    }
    const schema = url.searchParams.get('schema');
    url.searchParams.delete('schema');
    if (schema !== null && !SCHEMA_PATTERN.test(schema)) {
      throw new EngineError(
        'DB_UNUSABLE',
        `invalid schema name "${schema}" (lowercase letters, digits, _)`,
      );
    }
    const pool = new pg.Pool({
      connectionString: url.toString(),
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: 5000,
      ...(schema === null ? {} : { options: `-c search_path=${schema}` }),
    });
    // An idle client that loses its connection must not crash the host process.
    pool.on('error', () => undefined);
    const location = redact(new URL(options.url));
    let vectorType: boolean;
    try {
      if (schema !== null) {
        const { rows } = await pool.query<{ present: boolean }>(
          'SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS present',
          [schema],
        );
        if (rows[0]?.present !== true) {
          if (!options.create) {
            throw new EngineError(
              'NOT_INITIALIZED',
              `no memledger store at ${location}; create one (createEngine with create: true, or \`memledger init\`)`,
            );
          }
          // Two processes creating the schema at once: IF NOT EXISTS still races in the catalog,
          // and the loser's unique violation means the schema is there.
          await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`).catch((err: unknown) => {
            if ((err as { code?: string }).code !== '23505') throw err;
          });
        }
      }
      // pgvector is used where an administrator installed it (memledger never installs it), in
      // a version with iterative index scans (0.8), so filtered searches fill their k
      const { rows } = await pool.query<{ version: string | null }>(
        `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS version
         WHERE to_regtype('vector') IS NOT NULL`,
      );
      vectorType = atLeast(rows[0]?.version ?? null, [0, 8]);
    } catch (err) {
      await pool.end().catch(() => undefined);
      if (err instanceof EngineError) throw err;
      throw new EngineError(
        'DB_UNUSABLE',
        `cannot connect to ${location}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    return new PostgresClient(pool, location, vectorType);
  }

  query<T = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<QueryResult<T>> {
    return this.root.query<T>(sql, params, options);
  }

  exec(sql: string): Promise<void> {
    return this.root.exec(sql);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await fn(executor(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
