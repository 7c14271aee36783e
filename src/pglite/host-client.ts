import { lstatSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { EngineError, type ErrorCode } from '../domain/errors.js';
import { frozenView, type TrustView } from '../domain/trust.js';
import type {
  HostViewRequest,
  QueryResult,
  SqlCapabilities,
  SqlClient,
  SqlExecutor,
} from '../store/sql-client.js';
import { DatabaseError } from '../store/store-error.js';
import {
  FrameReader,
  HOST_PROTOCOL,
  HOST_PROTOCOL_NAME,
  isHello,
  MAX_FRAME_BYTES,
  privateSocketDir,
  realDir,
  writeFrame,
  type Answer,
  type Request,
  type WireError,
} from './host-protocol.js';
import { SnapshotSet } from './pglite-snapshot.js';

/** How long a client waits for a host's hello before it looks again (a busy host greets late). */
const HELLO_TIMEOUT_MS = 5_000;

type RequestBody = Request extends infer R ? (R extends Request ? Omit<R, 'id'> : never) : never;

function refused(message: string, data?: Record<string, unknown>): EngineError {
  return new EngineError('HOST_REFUSED', message, data === undefined ? {} : { data });
}

function wireToError(error: WireError): Error {
  if (error.engineCode !== undefined) {
    return new EngineError(
      error.engineCode as ErrorCode,
      error.message,
      error.data === undefined ? {} : { data: error.data },
    );
  }
  return new DatabaseError(error.message, error.code);
}

/** The socket at `path` may be trusted: a socket of this user (in a folder only it may enter). */
function checkSocketFile(path: string): boolean {
  const uid = process.getuid?.();
  if (path.startsWith(privateSocketDir())) {
    const folder = lstatSync(dirname(path), { throwIfNoEntry: false });
    if (folder === undefined) return false;
    if (!folder.isDirectory() || folder.uid !== uid || (folder.mode & 0o077) !== 0) {
      throw refused(
        `${dirname(path)} is not a folder only this user may enter; refusing its socket`,
      );
    }
  }
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st === undefined) return false;
  if (!st.isSocket())
    throw refused(`${path} is not a socket; refusing to use it as the store's host`);
  if (uid !== undefined && st.uid !== uid) {
    throw refused(
      `the socket ${path} belongs to user ${st.uid}, not this user (${uid}); refusing it`,
      { uid: st.uid },
    );
  }
  return true;
}

/** One connection to a host, after its hello. */
class Connection {
  private readonly pending = new Map<number, (answer: Answer | Error) => void>();
  private nextId = 1;
  private lost: EngineError | null = null;

  constructor(
    private readonly socket: Socket,
    reader: FrameReader,
    readonly hostPid: number,
  ) {
    socket.on('data', (chunk: Buffer) => {
      let messages: unknown[];
      try {
        messages = reader.push(chunk);
      } catch (err) {
        this.fail(`it sent a malformed frame (${(err as Error).message})`);
        socket.destroy();
        return;
      }
      for (const m of messages) {
        const answer = m as Partial<Answer> | null;
        if (typeof answer !== 'object' || answer === null || typeof answer.id !== 'number') {
          this.fail('it sent something that is no answer');
          socket.destroy();
          return;
        }
        const settle = this.pending.get(answer.id);
        this.pending.delete(answer.id);
        settle?.(answer as Answer);
      }
    });
    socket.on('close', () => this.fail('the connection closed'));
    socket.on('error', (err) => this.fail(err.message));
  }

  get alive(): boolean {
    return this.lost === null;
  }

  private fail(why: string, closedByClient = false): void {
    this.lost ??= closedByClient
      ? new EngineError('ENGINE_CLOSED', 'the store client is closed')
      : new EngineError(
          'HOST_LOST',
          `the store host (process ${this.hostPid}) went away: ${why}; what was in flight may or may not have been written`,
        );
    for (const settle of this.pending.values()) settle(this.lost);
    this.pending.clear();
  }

  async send(body: RequestBody): Promise<Extract<Answer, { ok: true }>> {
    if (this.lost !== null) throw this.lost;
    const id = this.nextId++;
    const answer = await new Promise<Answer | Error>((resolve) => {
      this.pending.set(id, resolve);
      try {
        writeFrame(this.socket, { ...body, id });
      } catch (err) {
        this.pending.delete(id);
        resolve(err as Error);
      }
    });
    if (answer instanceof Error) throw answer;
    if (!answer.ok) throw wireToError(answer.error);
    return answer;
  }

  close(): void {
    this.fail('the client closed it', true);
    this.socket.destroy();
  }
}

/**
 * Connects to the host listening at `socketPath` for the store `dir`. Null when none listens
 * there (no socket, a socket a dead host left, a host that hung up while stopping); HOST_REFUSED
 * for a socket that is not this user's or whose listener is no memledger host of this store.
 */
export async function connectHost(socketPath: string, dir: string): Promise<Connection | null> {
  if (!checkSocketFile(socketPath)) return null;
  const socket = connect(socketPath);
  const reader = new FrameReader(MAX_FRAME_BYTES);
  return new Promise<Connection | null>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: Connection | null | EngineError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('data', onData).off('error', onError).off('close', onClose);
      if (outcome instanceof EngineError) {
        socket.destroy();
        reject(outcome);
      } else {
        if (outcome === null) socket.destroy();
        resolve(outcome);
      }
    };
    // A host busy with a long statement greets late: not yet answered is not refused (the
    // caller looks again until its deadline; a listener that never greets is taken over by the
    // next host, which finds the store's lock free).
    const timer = setTimeout(() => finish(null), HELLO_TIMEOUT_MS);
    /** A host of another memledger version, asked to hand the store over: its process id. */
    let older: { protocol: string; pid: unknown } | null = null;
    const onData = (chunk: Buffer): void => {
      let messages: unknown[];
      try {
        messages = reader.push(chunk);
      } catch {
        finish(refused(`${socketPath} is not a memledger store host (it spoke another protocol)`));
        return;
      }
      if (messages.length === 0) return;
      if (older !== null) {
        // its answer to `yield`: stopping (the caller finds the store free, and starts a host
        // of this version), or busy with other processes
        const answer = messages[0] as { ok?: unknown } | null;
        if (answer?.ok === true) {
          finish(null);
        } else {
          finish(
            refused(
              `the store's host (process ${String(older.pid)}) is another memledger version's ` +
                `(${older.protocol}) and serves other processes; it stops once they are done ` +
                'and it has been idle, or stop it (SIGTERM) and run this again',
              {
                protocol: older.protocol,
                ...(typeof older.pid === 'number' ? { pid: older.pid } : {}),
              },
            ),
          );
        }
        return;
      }
      const [hello, ...early] = messages;
      const other = (hello as { protocol?: unknown } | null)?.protocol;
      if (
        typeof other === 'string' &&
        other.startsWith(HOST_PROTOCOL_NAME) &&
        other !== HOST_PROTOCOL &&
        early.length === 0
      ) {
        // Every version frames the same way and answers `yield`: an idle one stops.
        older = { protocol: other, pid: (hello as { pid?: unknown }).pid };
        writeFrame(socket, { id: 1, op: 'yield' });
        return;
      }
      if (!isHello(hello) || early.length > 0) {
        finish(refused(`${socketPath} is not a memledger store host (it spoke another protocol)`));
        return;
      }
      const want = realDir(dir);
      if (hello.dir !== want) {
        finish(refused(`the host at ${socketPath} serves ${hello.dir}, not ${want}`));
        return;
      }
      finish(new Connection(socket, reader, hello.pid));
    };
    const onError = (err: NodeJS.ErrnoException): void => {
      if (err.code === 'EACCES' || err.code === 'EPERM') {
        finish(refused(`${socketPath} may not be reached by this user`));
      } else {
        finish(null); // ECONNREFUSED, ENOENT, ECONNRESET: nobody serves it now
      }
    };
    const onClose = (): void => finish(null);
    socket.on('data', onData).on('error', onError).on('close', onClose);
  });
}

/** What `HostClient` needs to find a host again after losing one. */
export type Reconnect = () => Promise<Connection>;

/**
 * The store as a client of its host (`StoreHost`): the same statements, results and errors as the
 * in-process `PgliteClient`, and the same limits (one statement at a time, transactions one after
 * another). A host that went away is found (or started) again before the next statement; what
 * was in flight fails with HOST_LOST.
 */
export class HostClient implements SqlClient {
  readonly kind = 'pglite' as const;
  readonly capabilities: SqlCapabilities = {
    concurrentConnections: false,
    autovacuum: false,
    vectorType: true,
    roundTrips: false,
    stopsStatements: false,
  };
  private nextTx = 1;
  private closed = false;
  private reconnecting: Promise<Connection> | null = null;
  private readonly snapshots: SnapshotSet;

  constructor(
    private connection: Connection,
    readonly location: string,
    private readonly reconnect: Reconnect,
  ) {
    this.snapshots = new SnapshotSet(location, this.capabilities);
  }

  /** Whether the connection to the host is up (a lost one is made again by the next statement). */
  get connected(): boolean {
    return this.connection.alive;
  }

  /** The host's process id (tests and benches). */
  get hostPid(): number {
    return this.connection.hostPid;
  }

  private async live(): Promise<Connection> {
    if (this.closed) throw new EngineError('ENGINE_CLOSED', 'the store client is closed');
    if (this.connection.alive) return this.connection;
    this.reconnecting ??= this.reconnect().finally(() => {
      this.reconnecting = null;
    });
    const connection = await this.reconnecting;
    if (this.closed) {
      connection.close();
      throw new EngineError('ENGINE_CLOSED', 'the store client is closed');
    }
    this.connection = connection;
    return connection;
  }

  private executor(connection: Connection, tx?: number): SqlExecutor {
    const inTx = tx === undefined ? {} : { tx };
    return {
      async query<T>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<T>> {
        const answer = await connection.send({ op: 'query', sql, params, ...inTx });
        return { rows: (answer.rows ?? []) as T[], columns: answer.columns ?? [] };
      },
      async exec(sql: string): Promise<void> {
        await connection.send({ op: 'exec', sql, ...inTx });
      },
    };
  }

  async query<T = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<QueryResult<T>> {
    return this.executor(await this.live()).query<T>(sql, params);
  }

  async exec(sql: string): Promise<void> {
    return this.executor(await this.live()).exec(sql);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const connection = await this.live();
    const tx = this.nextTx++;
    await connection.send({ op: 'begin', tx });
    let result: T;
    try {
      result = await fn(this.executor(connection, tx));
    } catch (err) {
      await connection.send({ op: 'rollback', tx }).catch(() => undefined);
      throw err;
    }
    await connection.send({ op: 'commit', tx });
    return result;
  }

  /** The subject's trust view as the host keeps it (src/trust/host-views.ts). */
  async hostView(request: HostViewRequest): Promise<TrustView> {
    const answer = await (await this.live()).send({ op: 'view', request });
    return frozenView(answer.view as TrustView);
  }

  /** A copy of the store as it is now, booted in a worker thread of this process. */
  async snapshot(): Promise<SqlClient> {
    const answer = await (await this.live()).send({ op: 'dump' });
    return this.snapshots.add(new Blob([answer.dump ?? new Uint8Array()]));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.snapshots.closeAll();
    this.connection.close();
  }
}

export type { Connection };
