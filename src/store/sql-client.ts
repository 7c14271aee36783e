import type { OwnerAnchor } from '../domain/anchor.js';
import type { TrustView } from '../domain/trust.js';

/** What differs between engines is declared here, never tested by name in shared code. */
export interface SqlCapabilities {
  /** The engine serves several connections at once (PostgreSQL), or one (PGlite). */
  concurrentConnections: boolean;
  /**
   * The engine vacuums on its own (PostgreSQL's autovacuum). Without it (PGlite) the engine
   * vacuums the recall index now and then, so its index-only scans stay index-only.
   */
  autovacuum: boolean;
  /**
   * pgvector (0.8 or later) is there: PGlite bundles it; a PostgreSQL database has it when
   * someone ran `CREATE EXTENSION vector` in a schema on the store's search path. With it,
   * vector recall uses HNSW indexes; without it, it compares every vector in plain SQL.
   */
  vectorType: boolean;
  /**
   * Each statement is a round trip to a server (PostgreSQL): a statement that does the work of
   * two saves one. In process (PGlite) a statement costs its planning instead, and two simple
   * ones plan faster than one that holds both (recall's read ahead is taken only with this).
   */
  roundTrips: boolean;
  /**
   * The engine ends a running statement at its `statement_timeout` and serves other work
   * meanwhile (PostgreSQL). PGlite runs each statement on this thread and cannot interrupt one,
   * so SQL the engine did not write runs on a `snapshot` there, which can be stopped
   * (`boundedSql`).
   */
  stopsStatements: boolean;
}

/** The rows of one statement. */
export interface QueryResult<T> {
  rows: T[];
  /** Column names in order; duplicates kept (row objects collapse them). */
  columns?: string[];
}

/** Per-statement options of `SqlExecutor.query`. */
export interface QueryOptions {
  /**
   * The text is one of the engine's own fixed statements, run often: an engine may keep it
   * prepared on its connection (PostgreSQL then skips parsing and planning it each time).
   */
  prepare?: boolean;
  /**
   * The text must be exactly one statement (sent by the extended protocol, unnamed, so nothing
   * is kept on the connection): how text the engine did not write is run.
   */
  oneStatement?: boolean;
}

/** Runs statements: a client, or one transaction of it. */
export interface SqlExecutor {
  /** One statement with `$n` parameters. */
  query<T = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<QueryResult<T>>;
  /** Several statements, no parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/** The small port every store implementation talks to. */
export interface SqlClient extends SqlExecutor {
  readonly kind: 'pglite' | 'postgres';
  /** Where the data lives, for messages (a directory, `memory://`, or a URL without password). */
  readonly location: string;
  readonly capabilities: SqlCapabilities;
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * A copy of the store as it is now, as a client of its own that runs elsewhere and whose
   * `close` stops it at once, whatever it is running: given by an engine without
   * `stopsStatements`.
   */
  snapshot?(): Promise<SqlClient>;
  /**
   * The subject's trust view as the store's host builds and keeps it between its clients (a
   * client of the shared embedded store's host, src/trust/host-views.ts): a command then pays
   * for a check that nothing changed, not for verifying the whole chain again.
   */
  hostView?(request: HostViewRequest): Promise<TrustView>;
}

/** What a client of a store host asks its trust view by (`SqlClient.hostView`). */
export interface HostViewRequest {
  subjectId: string;
  /** The store's id, to pick the anchored head recorded for it. */
  storeId: string;
  /** The owner's anchor as the asking process holds it (null: none). */
  anchor: OwnerAnchor | null;
  /** The asking process's clock (ms): facts whose world time has ended are judged by it. */
  now: number;
}
