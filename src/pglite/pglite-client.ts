import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { EngineError } from '../domain/errors.js';
import type { QueryResult, SqlClient, SqlExecutor } from '../store/sql-client.js';
import { DirLock } from './dir-lock.js';

/** Marks a directory as a memledger store, so `--db` never adopts an unrelated directory. */
const MARKER_FILE = 'memledger.json';
const LOCK_FILE = 'memledger.lock';
const DATA_DIR = 'pgdata';

function executor(db: PGlite | Transaction): SqlExecutor {
  return {
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<T>> {
      const result = await db.query<T>(sql, params as unknown[]);
      return { rows: result.rows, columns: result.fields.map((f) => f.name) };
    },
    async exec(sql: string): Promise<void> {
      await db.exec(sql);
    },
  };
}

export interface PgliteOpenOptions {
  /** A directory path, or `memory://` for a store that lives only in this process. */
  location: string;
  /** Create the directory when it does not exist (only `init` and `demo` do). */
  create: boolean;
}

/** Checks the directory before anything is written, so a bad `--db` changes nothing. */
function prepareDirectory(dir: string, create: boolean): boolean {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) {
      throw new EngineError('DB_UNUSABLE', `${dir} is a file, not a store directory`);
    }
    if (existsSync(join(dir, MARKER_FILE))) return false;
    if (readdirSync(dir).length > 0) {
      throw new EngineError(
        'DB_UNUSABLE',
        `${dir} is a non-empty directory that is not a memledger store; choose another directory`,
      );
    }
    if (!create) {
      throw new EngineError(
        'NOT_INITIALIZED',
        `no memledger store at ${dir}; create one (createEngine with create: true, or \`memledger init\`)`,
      );
    }
    return true;
  }
  if (!create) {
    throw new EngineError(
      'NOT_INITIALIZED',
      `no memledger store at ${dir}; create one (createEngine with create: true, or \`memledger init\`)`,
    );
  }
  const parent = dirname(dir);
  if (!existsSync(parent) || !statSync(parent).isDirectory()) {
    throw new EngineError('DB_UNUSABLE', `cannot create ${dir}: ${parent} is not a directory`);
  }
  try {
    mkdirSync(dir);
  } catch (err) {
    throw new EngineError('DB_UNUSABLE', `cannot create ${dir}`, { cause: err });
  }
  return true;
}

/** Starts PGlite with the pgvector extension it bundles, created in the store on first open. */
async function boot(dataDir?: string): Promise<PGlite> {
  const db = await PGlite.create(dataDir, { extensions: { vector } });
  try {
    await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return db;
}

export class PgliteClient implements SqlClient {
  readonly kind = 'pglite' as const;
  readonly capabilities = { concurrentConnections: false, autovacuum: false, vectorType: true };
  private readonly root: SqlExecutor;

  private constructor(
    private readonly db: PGlite,
    readonly location: string,
    private readonly lock: DirLock | null,
  ) {
    this.root = executor(db);
  }

  static async open(options: PgliteOpenOptions): Promise<PgliteClient> {
    if (options.location === 'memory://') {
      return new PgliteClient(await boot(), 'memory://', null);
    }
    const dir = resolve(options.location);
    const fresh = prepareDirectory(dir, options.create);
    const lock = DirLock.acquire(join(dir, LOCK_FILE), dir);
    try {
      const db = await boot(join(dir, DATA_DIR));
      if (fresh) writeFileSync(join(dir, MARKER_FILE), JSON.stringify({ format: 1 }) + '\n');
      return new PgliteClient(db, dir, lock);
    } catch (err) {
      lock.release();
      if (err instanceof EngineError) throw err;
      throw new EngineError('DB_UNUSABLE', `cannot open the embedded store at ${dir}`, {
        cause: err,
      });
    }
  }

  query<T = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<QueryResult<T>> {
    return this.root.query<T>(sql, params);
  }

  exec(sql: string): Promise<void> {
    return this.root.exec(sql);
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => fn(executor(tx)));
  }

  async close(): Promise<void> {
    try {
      if (!this.db.closed) await this.db.close();
    } finally {
      this.lock?.release();
    }
  }
}
