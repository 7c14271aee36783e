import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { EngineError } from '../domain/errors.js';
import { migrate } from '../store/migrator.js';
import type { QueryResult, SqlExecutor } from '../store/sql-client.js';
import { pgErrorCode } from '../store/store-error.js';
import {
  frame,
  FrameReader,
  HOST_PROTOCOL,
  privateSocketDir,
  socketPathFor,
  type Answer,
  type Request,
  type WireError,
} from './host-protocol.js';
import { PgliteClient } from './pglite-client.js';

/** How long a host with no client waits before it stops, unless told otherwise. */
export const DEFAULT_HOST_IDLE_MS = 5 * 60_000;
/**
 * A transaction whose client sends nothing for this long is rolled back: transactions run one at
 * a time, so a client stalled inside one would hold up every other process on the store.
 */
export const TX_IDLE_MS = 60_000;

export interface StoreHostOptions {
  /** The store's directory, resolved. */
  dir: string;
  /** Create the store when there is none (`init`, `demo`, library hosts by default). */
  create: boolean;
  /** Stop after this long with no client connected. */
  idleMs?: number;
  /** A freshly migrated store's dump that a new store starts from (tests). */
  template?: Blob;
}

/** Why a transaction's channel stopped waiting for its client. */
class ChannelClosed extends Error {}

/** The steps one client sends inside one transaction, handed to the transaction in order. */
class TxChannel {
  private readonly queue: Request[] = [];
  private waiter: { resolve: (r: Request) => void; reject: (e: Error) => void } | null = null;
  private closed: Error | null = null;
  /** The commit or rollback that ended it, to be answered once the transaction has. */
  ending: Request | null = null;

  push(request: Request): void {
    if (this.waiter !== null) {
      const { resolve } = this.waiter;
      this.waiter = null;
      resolve(request);
    } else {
      this.queue.push(request);
    }
  }

  next(): Promise<Request> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.closed !== null) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        this.close(new ChannelClosed(`idle in a transaction for ${TX_IDLE_MS / 1000} s`));
        reject(this.closed as Error);
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

  close(reason: Error): void {
    this.closed ??= reason;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(reason);
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

/** A store's socket path is ours to listen on: nothing there, or a socket a dead host left. */
function clearSocketPath(path: string): void {
  if (path.startsWith(privateSocketDir())) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const st = statSync(dirname(path));
    if (st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0) {
      throw new EngineError(
        'HOST_REFUSED',
        `${dirname(path)} is not a folder only this user may enter; remove it`,
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
  /** The socket file's inode once in place: removed at stop only while it is still this one. */
  private socketIno: number | null = null;
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
  ) {
    this.realDir = realpathSync(client.location);
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
    const staging = mkdtempSync(join(dirname(this.socketPath), '.memledger-host-'));
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
      this.socketIno = lstatSync(this.socketPath).ino;
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
    const reader = new FrameReader();
    const send = (answer: Answer): void => {
      if (!socket.destroyed) socket.write(frame(answer));
    };
    socket.on('data', (chunk: Buffer) => {
      let requests: unknown[];
      try {
        requests = reader.push(chunk);
      } catch {
        socket.destroy(); // not our protocol: nothing it sent is run
        return;
      }
      for (const r of requests) this.handle(r as Request, txs, send);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.connections.delete(socket);
      // A client gone mid-transaction: its transaction is rolled back.
      for (const tx of txs.values()) tx.close(new ChannelClosed('the client went away'));
      this.armIdle();
    });
    socket.write(frame({ protocol: HOST_PROTOCOL, dir: this.realDir, pid: process.pid }));
  }

  private handle(request: Request, txs: Map<number, TxChannel>, send: (a: Answer) => void): void {
    const fail = (err: unknown): void => send({ id: request.id, ok: false, error: wireError(err) });
    switch (request.op) {
      case 'begin':
        this.begin(request, txs, send);
        return;
      case 'dump':
        this.client
          .dump()
          .then(
            async (blob) =>
              send({ id: request.id, ok: true, dump: new Uint8Array(await blob.arrayBuffer()) }),
            fail,
          );
        return;
      default: {
        if (request.tx === undefined) {
          if (request.op === 'commit' || request.op === 'rollback') {
            fail(new EngineError('INVALID_ARGUMENT', `${request.op} outside a transaction`));
            return;
          }
          run(this.client, request).then((r) => send({ id: request.id, ok: true, ...r }), fail);
          return;
        }
        const tx = txs.get(request.tx);
        if (tx === undefined) {
          fail(new EngineError('INVALID_ARGUMENT', `no open transaction ${request.tx}`));
          return;
        }
        tx.push(request);
      }
    }
  }

  private begin(
    request: Extract<Request, { op: 'begin' }>,
    txs: Map<number, TxChannel>,
    send: (a: Answer) => void,
  ): void {
    if (txs.has(request.tx)) {
      send({ id: request.id, ok: false, error: { message: `transaction ${request.tx} is open` } });
      return;
    }
    const channel = new TxChannel();
    txs.set(request.tx, channel);
    let started = false;
    this.client
      .transaction(async (tx) => {
        started = true;
        send({ id: request.id, ok: true });
        for (;;) {
          const step = await channel.next();
          if (step.op === 'commit' || step.op === 'rollback') {
            channel.ending = step;
            if (step.op === 'rollback') throw new ChannelClosed('rolled back by the client');
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
          txs.delete(request.tx);
          if (channel.ending !== null) send({ id: channel.ending.id, ok: true });
        },
        (err: unknown) => {
          txs.delete(request.tx);
          channel.close(new ChannelClosed('the transaction ended'));
          const ending = channel.ending;
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
      const st = lstatSync(this.socketPath, { throwIfNoEntry: false });
      if (st !== undefined && st.ino === this.socketIno) unlinkSync(this.socketPath);
      try {
        await this.client.close();
      } finally {
        this.resolveStopped();
      }
    })();
    return this.stopping;
  }
}

async function run(
  db: SqlExecutor,
  request: Request,
): Promise<{ rows?: unknown[]; columns?: string[] }> {
  if (request.op === 'query') {
    const result: QueryResult<unknown> = await db.query(request.sql, request.params);
    return {
      rows: result.rows,
      ...(result.columns === undefined ? {} : { columns: result.columns }),
    };
  }
  if (request.op === 'exec') {
    await db.exec(request.sql);
    return {};
  }
  throw new EngineError(
    'INVALID_ARGUMENT',
    `unknown request ${String((request as { op?: unknown }).op)}`,
  );
}
