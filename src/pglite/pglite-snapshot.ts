import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { EngineError } from '../domain/errors.js';
import type { QueryResult, SqlCapabilities, SqlClient, SqlExecutor } from '../store/sql-client.js';
import { DatabaseError } from '../store/store-error.js';

/**
 * The worker's whole program: boot PGlite (with the pgvector bundle the store was made with) from
 * the dumped data directory, then run each statement it is sent, one at a time. Plain CommonJS
 * given as text, so the same code runs from the TypeScript sources and the build. 16 MB of shared
 * buffers instead of 128: setting up 128 MB was a large part of a boot (a boot took about 40%
 * less).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglite);
const { vector } = require(workerData.vector);
const failure = (e) => ({ message: String(e && e.message !== undefined ? e.message : e),
  code: e && typeof e.code === 'string' ? e.code : undefined });
const startParams = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];
PGlite.create({ loadDataDir: workerData.data, extensions: { vector }, startParams }).then((db) => {
  parentPort.on('message', ({ id, sql, params, exec }) => {
    (exec ? db.exec(sql).then(() => ({ rows: [], fields: [] })) : db.query(sql, params)).then(
      (r) => parentPort.postMessage({ id, rows: r.rows, columns: r.fields.map((f) => f.name) }),
      (e) => parentPort.postMessage({ id, error: failure(e) }),
    );
  });
  parentPort.postMessage({ ready: true });
}, (e) => parentPort.postMessage({ bootFailed: failure(e) }));
`;

const require = createRequire(import.meta.url);

interface Answer {
  id?: number;
  rows?: unknown[];
  columns?: string[];
  error?: { message: string; code?: string };
  ready?: true;
  bootFailed?: { message: string };
}

/**
 * The snapshots a client has open, closed with it: `open` boots one from a dump and keeps it
 * until it closes.
 */
export class SnapshotSet {
  private readonly open = new Set<PgliteSnapshot>();

  constructor(
    private readonly location: string,
    private readonly capabilities: SqlCapabilities,
  ) {}

  async add(dump: Blob): Promise<SqlClient> {
    const snapshot = await PgliteSnapshot.open(dump, {
      location: this.location,
      capabilities: this.capabilities,
      onClose: (s) => this.open.delete(s),
    });
    this.open.add(snapshot);
    return snapshot;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.open].map((s) => s.close()));
  }
}

/** The store a snapshot copies, and who hears that it closed. */
export interface SnapshotOf {
  location: string;
  capabilities: SqlCapabilities;
  onClose: (snapshot: PgliteSnapshot) => void;
}

/**
 * A copy of a PGlite store in a worker thread of its own (`PgliteClient.snapshot`): what it runs
 * never holds up this thread, and `close` terminates the worker at once, mid-statement included.
 */
export class PgliteSnapshot implements SqlClient {
  readonly kind = 'pglite' as const;
  readonly capabilities: SqlCapabilities;
  private readonly pending = new Map<number, (answer: Answer | EngineError) => void>();
  private nextId = 1;
  private stopped: EngineError | null = null;

  private constructor(
    private readonly worker: Worker,
    readonly location: string,
    capabilities: SqlCapabilities,
    private readonly onClose: (snapshot: PgliteSnapshot) => void,
  ) {
    this.capabilities = capabilities;
  }

  /** Boots a copy of the data directory `data` (a `dumpDataDir` tarball) in a new worker. */
  static async open(data: Blob, of: SnapshotOf): Promise<PgliteSnapshot> {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        data,
        pglite: require.resolve('@electric-sql/pglite'),
        vector: require.resolve('@electric-sql/pglite-pgvector'),
      },
    });
    // A snapshot left running must not keep the process alive.
    worker.unref();
    const snapshot = new PgliteSnapshot(
      worker,
      `snapshot of ${of.location}`,
      of.capabilities,
      of.onClose,
    );
    await new Promise<void>((resolve, reject) => {
      const booted = (answer: Answer) => {
        settle();
        if (answer.ready === true) resolve();
        else fail(answer.bootFailed?.message ?? 'no answer');
      };
      const failed = (err: Error) => fail(err.message);
      const exited = (code: number) => fail(`its worker exited (${code})`);
      const settle = () => {
        worker.off('message', booted).off('error', failed).off('exit', exited);
      };
      const fail = (why: string) => {
        settle();
        void worker.terminate();
        reject(new EngineError('DB_UNUSABLE', `the store's snapshot did not start: ${why}`));
      };
      worker.on('message', booted).on('error', failed).on('exit', exited);
    });
    worker.on('message', (answer: Answer) => {
      const settle = answer.id === undefined ? undefined : snapshot.pending.get(answer.id);
      if (answer.id !== undefined) snapshot.pending.delete(answer.id);
      settle?.(answer);
    });
    worker.on('error', (err) => snapshot.stop(err.message));
    worker.on('exit', (code) => snapshot.stop(`its worker exited (${code})`));
    return snapshot;
  }

  /** Fails what is pending and everything after (a worker that ended answers nothing more). */
  private stop(why: string): void {
    this.stopped ??= new EngineError('DB_UNUSABLE', `the store's snapshot stopped: ${why}`);
    for (const settle of this.pending.values()) settle(this.stopped);
    this.pending.clear();
  }

  private async send(message: { sql: string; params?: readonly unknown[]; exec?: true }) {
    if (this.stopped !== null) throw this.stopped;
    const id = this.nextId++;
    const answer = await new Promise<Answer | EngineError>((resolve) => {
      this.pending.set(id, resolve);
      this.worker.postMessage({ id, ...message });
    });
    if (answer instanceof EngineError) throw answer;
    if (answer.error !== undefined)
      throw new DatabaseError(answer.error.message, answer.error.code);
    return answer;
  }

  async query<T = Record<string, unknown>>(
    sql: string,
    params: readonly unknown[] = [],
  ): Promise<QueryResult<T>> {
    const answer = await this.send({ sql, params });
    return { rows: (answer.rows ?? []) as T[], columns: answer.columns ?? [] };
  }

  async exec(sql: string): Promise<void> {
    await this.send({ sql, exec: true });
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    await this.query('BEGIN');
    let result: T;
    try {
      result = await fn(this);
    } catch (err) {
      if (this.stopped === null) await this.query('ROLLBACK');
      throw err;
    }
    await this.query('COMMIT');
    return result;
  }

  /** Terminates the worker: a statement it is running ends there. */
  async close(): Promise<void> {
    this.stop('it was closed');
    this.onClose(this);
    await this.worker.terminate();
  }
}
