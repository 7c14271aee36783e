import { EngineError } from '../domain/errors.js';
import { embeddedTemplate } from './embedded-template.js';
import { isInitialized, migrate } from './migrator.js';
import type { SqlClient } from './sql-client.js';

/** Where the store lives when nothing names one: `./.memledger`, embedded. */
export { DEFAULT_DB } from '../domain/defaults.js';

/** What `openSqlClient` opens, and whether it may create it. */
export interface OpenStoreOptions {
  /** A directory (embedded PGlite), `memory://`, or a `postgres://` URL. */
  db: string;
  /** Create a new store when there is none (`init`, `demo`, and library hosts by default). */
  create: boolean;
  /**
   * An embedded directory store is reached through its host, shared with every other process
   * (docs/API.md, "One store, many processes"); `idleMs` is how long a host this call starts
   * waits with no client before it stops. Ignored for `memory://` and PostgreSQL.
   */
  shared?: { idleMs?: number } | undefined;
}

/**
 * A new embedded store's data directory, freshly migrated (as `setEmbeddedTemplate` takes it), or
 * with no migration applied (`migrated: false`, for tests that build a store of an older release).
 */
export async function makeEmbeddedTemplate(options: { migrated?: boolean } = {}): Promise<Blob> {
  const { PgliteClient } = await import('../pglite/pglite-client.js');
  const client = await PgliteClient.open({ location: 'memory://', create: true });
  try {
    if (options.migrated !== false) await migrate(client);
    return await client.dump();
  } finally {
    await client.close();
  }
}

/** Whether `db` names a PostgreSQL server rather than an embedded store. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/**
 * Opens the engine the `db` string names and brings its schema up to date. Whether the recall
 * index is current is the caller's next check (`checkRecallIndex`): rebuilding it is never a
 * side effect of opening.
 */
export async function openSqlClient(options: OpenStoreOptions): Promise<SqlClient> {
  const db = options.db.trim();
  if (db === '') {
    throw new EngineError('DB_UNUSABLE', 'db is empty: use a directory, memory:// or postgres://');
  }
  let client: SqlClient;
  if (isPostgresUrl(db)) {
    const { PostgresClient } = await import('../postgres/postgres-client.js');
    client = await PostgresClient.open({ url: db, create: options.create });
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(db) && db !== 'memory://') {
    throw new EngineError(
      'DB_UNUSABLE',
      `unsupported db "${db}": use a directory, memory:// or postgres://`,
    );
  } else if (options.shared !== undefined && db !== 'memory://') {
    const { openShared } = await import('../pglite/host-launch.js');
    client = await openShared({ location: db, create: options.create, ...options.shared });
  } else {
    const { PgliteClient } = await import('../pglite/pglite-client.js');
    const template = embeddedTemplate();
    // A new directory is migrated before it is put in place: a crash leaves no store or a whole one.
    const open = (): Promise<SqlClient> =>
      PgliteClient.open({
        location: db,
        create: options.create,
        prepare: (fresh) => migrate(fresh),
        ...(template === undefined ? {} : { template }),
      });
    try {
      client = await open();
    } catch (err) {
      // the store's host, idle since the last command, hands the store over to this process
      if (!(
        err instanceof EngineError &&
        err.code === 'STORE_LOCKED' &&
        err.data?.role === 'host'
      )) {
        throw err;
      }
      const { yieldHost } = await import('../pglite/host-launch.js');
      if (!(await yieldHost(db))) {
        throw new EngineError(
          'STORE_LOCKED',
          `${err.message} (a memledger host that serves other processes: open it with shared: true to share it)`,
          err.data === undefined ? {} : { data: err.data },
        );
      }
      client = await open();
    }
  }
  try {
    if (!options.create && !(await isInitialized(client))) {
      throw new EngineError(
        'NOT_INITIALIZED',
        `no memledger store at ${client.location}; create one (createEngine with create: true, or \`memledger init\`)`,
      );
    }
    await migrate(client);
    return client;
  } catch (err) {
    await client.close().catch(() => undefined);
    if (err instanceof EngineError) throw err;
    throw new EngineError(
      'DB_UNUSABLE',
      `cannot prepare the store at ${client.location}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}
