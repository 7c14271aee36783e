import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  unlinkSync,
  type Stats,
} from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { EngineError } from '../domain/errors.js';
import { migrate } from '../store/migrator.js';
import type { QueryResult, SqlClient, SqlExecutor } from '../store/sql-client.js';
import { pgErrorCode } from '../store/store-error.js';
import {
  FrameReader,
  HOST_PROTOCOL,
  MAX_REQUEST_BYTES,
  privateSocketDir,
  realDir,
  socketPathFor,
  STAGING_PREFIX,
  writeFrame,
  type Answer,
  type Request,
  type WireError,
} from './host-protocol.js';
import { PgliteClient } from './pglite-client.js';

/** How long a host with no client waits before it stops, unless told otherwise. */
export const DEFAULT_HOST_IDLE_MS = 5 * 60_000;
/**
 * A transaction whose client sends nothing for this long is rolled back: transactions run one at
 * a time, so a client stalled inside one would hold up every other process on the store. The
 * engine's transactions send their steps back to back (what they wait on, a model or an
 * embedder, is called before they begin).
 */
export const TX_IDLE_MS = 15_000;
/** Ended transactions a connection remembers, to say why a late step is refused. */
const ENDED_KEPT = 64;

export interface StoreHostOptions {
  /** The store's directory. */
  dir: string;
  /** Create the store when there is none (`init`, `demo`, library hosts by default). */
  create: boolean;
  /** Stop after this long with no client connected. */
  idleMs?: number;
  /** A freshly migrated store's dump that a new store starts from (tests). */
  template?: Blob;
  /**
   * Keeps trust views for the clients (src/trust/host-views.ts), made once the store is open;
   * without it a host refuses `view` requests.
   */
  views?: (client: SqlClient) => HostViews;
}

/** What answers a host's `view` requests. */
export interface HostViews {
  view(request: unknown): Promise<unknown>;
}

/** Why a transaction's channel stopped taking steps. */
class ChannelClosed extends Error {}

/** The steps one client sends inside one transaction, handed to the transaction in order. */
class TxChannel {
  private readonly queue: Request[] = [];
  private waiter: { resolve: (r: Request) => void; reject: (e: Error) => void } | null = null;
  /** Why it takes no more steps (ended, idle, its client gone); null while open. */
  closed: ChannelClosed | null = null;
  /** The commit or rollback that ended it, to be answered once the transaction has. */
  ending: Request | null = null;

  /** Hands a step to the transaction; false when it takes no more (the caller answers). */
  push(request: Request): boolean {
    if (this.closed !== null || this.ending !== null) return false;
    if (this.waiter !== null) {
      const { resolve } = this.waiter;
      this.waiter = null;
      resolve(request);
    } else {
      this.queue.push(request);
    }
    return true;
  }

  next(): Promise<Request> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.closed !== null) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.close(new ChannelClosed(`it was idle for ${TX_IDLE_MS / 1000} s and rolled back`));
      }, TX_IDLE_MS);
      this.waiter = {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  close(reason: ChannelClosed): void {
    this.closed ??= reason;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(this.closed);
  }

  /** The steps it was sent and will never run. */
  drain(): Request[] {
    return this.queue.splice(0);
  }
}

function wireError(err: unknown): WireError {
  if (err instanceof EngineError) {
    return {
      message: err.message,
      engineCode: err.code,
      ...(err.data === undefined ? {} : { data: err.data }),
    };
  }
  const code = pgErrorCode(err);
  return {
    message: (err as Error)?.message ?? String(err),
    ...(code === undefined ? {} : { code }),
  };
}

function isRequest(message: unknown): message is Request {
  const m = message as { id?: unknown; op?: unknown } | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    Number.isSafeInteger(m.id) &&
    typeof m.op === 'string' &&
    ['query', 'exec', 'begin', 'commit', 'rollback', 'dump', 'view', 'yield'].includes(m.op)
  );
}

/** A store's socket path is ours to listen on: nothing there, or a socket a dead host left. */
function clearSocketPath(path: string): void {
  if (path.startsWith(privateSocketDir())) {
    const folder = dirname(path);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const st = lstatSync(folder);
    if (!st.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0) {
      throw new EngineError(
        'HOST_REFUSED',
        `${folder} is not a folder only this user may enter; remove it`,
      );
    }
  }
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st === undefined) return;
  if (!st.isSocket()) {
    throw new EngineError(
      'HOST_REFUSED',
      `${path} is there and is not a socket; remove it so the store can be shared`,
    );
  }
  // Under the store's lock: no host serves this socket any more.
  unlinkSync(path);
}

/** The same file, not one made since at the same inode number. */
function sameFile(a: Stats | undefined, b: Stats | null): boolean {
  return (
    a !== undefined &&
    b !== null &&
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.birthtimeMs === b.birthtimeMs
  );
}

/**
 * The one process that owns an embedded store (its PGlite and its directory lock) and serves it
 * to every other memledger process over a Unix socket only this user may reach. Statements run
 * in arrival order on the one PGlite; a transaction holds the store until it ends, so
 * transactions from different clients run one after another, as in one process.
 */
export class StoreHost {
  private readonly connections = new Set<Socket>();
  private idleTimer: NodeJS.Timeout | null = null;
  private stopping: Promise<void> | null = null;
  /** The socket file once in place: removed at stop only while it is still this one. */
  private socketFile: Stats | null = null;
  /** The directory as the hello names it (symlinks resolved, as clients resolve theirs). */
  private readonly realDir: string;
  private resolveStopped!: () => void;
  /** Settles when the host has stopped (idle, or `stop`) and released the store. */
  readonly stopped = new Promise<void>((resolve) => {
    this.resolveStopped = resolve;
  });

  private constructor(
    private readonly client: PgliteClient,
    private readonly server: Server,
    readonly socketPath: string,
    private readonly idleMs: number,
    private readonly views: HostViews | null,
  ) {
    this.realDir = realDir(client.location);
  }

  /** Opens the store (taking its lock) and listens; STORE_LOCKED when another process has it. */
  static async start(options: StoreHostOptions): Promise<StoreHost> {
    const client = await PgliteClient.open({
      location: options.dir,
      create: options.create,
      prepare: (fresh) => migrate(fresh),
      lockRole: 'host',
      ...(options.template === undefined ? {} : { template: options.template }),
    });
    try {
      await migrate(client);
      const socketPath = socketPathFor(client.location);
      clearSocketPath(socketPath);
      const server = createServer();
      const host = new StoreHost(
        client,
        server,
        socketPath,
        options.idleMs ?? DEFAULT_HOST_IDLE_MS,
        options.views?.(client) ?? null,
      );
      await host.listen();
      return host;
    } catch (err) {
      await client.close().catch(() => undefined);
      if (err instanceof EngineError) throw err;
      throw new EngineError('DB_UNUSABLE', `cannot share the store at ${options.dir}`, {
        cause: err,
      });
    }
  }

  private async listen(): Promise<void> {
    this.server.on('connection', (socket) => this.accept(socket));
    // Bound in a folder only this user may enter, made 0600, then renamed into place: no other
    // user can connect in the moment between bind and chmod (a worker thread cannot set a umask).
    const staging = mkdtempSync(join(dirname(this.socketPath), STAGING_PREFIX));
    try {
      const bound = join(staging, 's');
      await new Promise<void>((resolve, reject) => {
        this.server.once('error', reject);
        this.server.listen(bound, () => {
          this.server.off('error', reject);
          resolve();
        });
      });
      chmodSync(bound, 0o600);
      renameSync(bound, this.socketPath);
      this.socketFile = lstatSync(this.socketPath);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    this.armIdle();
  }

  private armIdle(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.connections.size > 0 || this.stopping !== null) return;
    this.idleTimer = setTimeout(() => void this.stop(), this.idleMs);
    this.idleTimer.unref?.();
  }

  private accept(socket: Socket): void {
    if (this.stopping !== null) {
      socket.destroy();
      return;
    }
    this.connections.add(socket);
    this.armIdle();
    const txs = new Map<number, TxChannel>();
    const ended = new Map<number, string>();
    const reader = new FrameReader(MAX_REQUEST_BYTES);
    const send = (answer: Answer): void => {
      if (socket.destroyed) return;
      try {
        writeFrame(socket, answer);
      } catch (err) {
        // an answer too large to send: the request fails instead
        writeFrame(socket, { id: answer.id, ok: false, error: wireError(err) });
      }
    };
    const connection = { txs, ended, send };
    socket.on('data', (chunk: Buffer) => {
      let requests: unknown[];
      try {
        requests = reader.push(chunk);
      } catch {
        socket.destroy(); // not our protocol: nothing it sent is run
        return;
      }
      for (const r of requests) {
        if (!isRequest(r)) {
          socket.destroy();
          return;
        }
        this.handle(r, connection);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.connections.delete(socket);
      // A client gone mid-transaction: its transaction is rolled back.
      for (const tx of txs.values()) tx.close(new ChannelClosed('its client went away'));
      this.armIdle();
    });
    writeFrame(socket, { protocol: HOST_PROTOCOL, dir: this.realDir, pid: process.pid });
  }

  private handle(request: Request, connection: Connection): void {
    const { txs, ended, send } = connection;
    const fail = (err: unknown): void => send({ id: request.id, ok: false, error: wireError(err) });
    switch (request.op) {
      case 'begin':
        this.begin(request, connection);
        return;
      case 'yield':
        // only an idle host hands the store over: nobody else is connected
        if (this.connections.size > 1) {
          fail(
            new EngineError(
              'STORE_LOCKED',
              `the store's host (process ${process.pid}) serves ${this.connections.size - 1} other process(es)`,
              { data: { pid: process.pid, role: 'host' } },
            ),
          );
          return;
        }
        send({ id: request.id, ok: true });
        void this.stop();
        return;
      case 'view':
        if (this.views === null) {
          fail(new EngineError('INVALID_ARGUMENT', 'this host keeps no trust views'));
          return;
        }
        this.views
          .view(request.request)
          .then((view) => send({ id: request.id, ok: true, view }))
          .catch(fail);
        return;
      case 'dump':
        this.client
          .dump()
          .then((blob) => blob.arrayBuffer())
          .then((bytes) => send({ id: request.id, ok: true, dump: new Uint8Array(bytes) }))
          .catch(fail);
        return;
      default: {
        if (request.tx === undefined) {
          if (request.op === 'commit' || request.op === 'rollback') {
            fail(new EngineError('INVALID_ARGUMENT', `${request.op} outside a transaction`));
            return;
          }
          run(this.client, request)
            .then((r) => send({ id: request.id, ok: true, ...r }))
            .catch(fail);
          return;
        }
        const tx = txs.get(request.tx);
        if (tx === undefined || !tx.push(request)) {
          const why = tx?.closed?.message ?? ended.get(request.tx) ?? 'it was never begun';
          fail(new EngineError('INVALID_ARGUMENT', `transaction ${request.tx} is over: ${why}`));
        }
      }
    }
  }

  private begin(request: Extract<Request, { op: 'begin' }>, connection: Connection): void {
    const { txs, ended, send } = connection;
    if (txs.has(request.tx) || ended.has(request.tx)) {
      send({
        id: request.id,
        ok: false,
        error: { message: `transaction ${request.tx} was begun already` },
      });
      return;
    }
    const channel = new TxChannel();
    txs.set(request.tx, channel);
    let started = false;
    const settle = (why: string): void => {
      txs.delete(request.tx);
      ended.set(request.tx, why);
      if (ended.size > ENDED_KEPT) ended.delete(ended.keys().next().value as number);
      channel.close(new ChannelClosed(why));
      for (const step of channel.drain()) {
        send({
          id: step.id,
          ok: false,
          error: { message: `transaction ${request.tx} is over: ${why}` },
        });
      }
    };
    this.client
      .transaction(async (tx) => {
        started = true;
        send({ id: request.id, ok: true });
        for (;;) {
          const step = await channel.next();
          if (step.op === 'commit' || step.op === 'rollback') {
            channel.ending = step;
            if (step.op === 'rollback') throw new ChannelClosed('it was rolled back');
            return;
          }
          try {
            const result = await run(tx, step);
            send({ id: step.id, ok: true, ...result });
          } catch (err) {
            send({ id: step.id, ok: false, error: wireError(err) });
          }
        }
      })
      .then(
        () => {
          settle('it was committed');
          if (channel.ending !== null) send({ id: channel.ending.id, ok: true });
        },
        (err: unknown) => {
          const ending = channel.ending;
          settle(err instanceof ChannelClosed ? err.message : 'it failed and was rolled back');
          if (!started) send({ id: request.id, ok: false, error: wireError(err) });
          else if (ending?.op === 'rollback') send({ id: ending.id, ok: true });
          else if (ending !== null) send({ id: ending.id, ok: false, error: wireError(err) });
        },
      );
  }

  /** Stops listening, lets go of every client, closes the store and releases its lock. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.idleTimer !== null) clearTimeout(this.idleTimer);
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      for (const socket of this.connections) socket.destroy();
      await closed;
      // the listener was bound at another path and renamed, so closing it removes nothing here
      try {
        if (sameFile(lstatSync(this.socketPath, { throwIfNoEntry: false }), this.socketFile)) {
          unlinkSync(this.socketPath);
        }
      } catch {
        // gone already
      }
      try {
        await this.client.close();
      } finally {
        this.resolveStopped();
      }
    })();
    return this.stopping;
  }
}

/** What a host keeps per client connection. */
interface Connection {
  txs: Map<number, TxChannel>;
  /** Transactions that ended, and how, to answer a late step with the reason. */
  ended: Map<number, string>;
  send: (answer: Answer) => void;
}

async function run(
  db: SqlExecutor,
  request: Request,
): Promise<{ rows?: unknown[]; columns?: string[] }> {
  if (request.op === 'query') {
    if (typeof request.sql !== 'string' || !Array.isArray(request.params)) {
      throw new EngineError('INVALID_ARGUMENT', 'a query needs sql text and a list of params');
    }
    const result: QueryResult<unknown> = await db.query(request.sql, request.params);
    return {
      rows: result.rows,
      ...(result.columns === undefined ? {} : { columns: result.columns }),
    };
  }
  if (request.op === 'exec') {
    if (typeof request.sql !== 'string') {
      throw new EngineError('INVALID_ARGUMENT', 'exec needs sql text');
    }
    await db.exec(request.sql);
    return {};
  }
  throw new EngineError(
    'INVALID_ARGUMENT',
    `unknown request ${String((request as { op?: unknown }).op)}`,
  );
}
