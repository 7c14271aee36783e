import { createHash } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { EngineError } from '../domain/errors.js';

/**
 * What a store host and its clients say to each other over the host's Unix socket
 * (docs/ARCHITECTURE.md, "The store host"). Each message is a frame: a 4-byte big-endian length,
 * then the message in V8's serialization format, so what a statement returns reaches the client
 * exactly as PGlite gave it (dates, byte arrays, JSON values), as it would in process.
 *
 * The host speaks first: a hello naming the protocol and the store it serves. Then the client
 * sends requests, each with an id, and the host answers each once, in any order.
 */
export const HOST_PROTOCOL_NAME = 'memledger-store-host/';
/**
 * This version of it: a client refuses a host that speaks another (a host of an older memledger).
 * 3: trust views carry the disputed facts and the unsigned retractions (migration 19).
 */
export const HOST_PROTOCOL = `${HOST_PROTOCOL_NAME}3`;
/** The socket's name inside the store directory. */
export const SOCKET_FILE = 'memledger.sock';
/** A frame larger than this is refused (a dump of a large store, to a client, is the largest). */
export const MAX_FRAME_BYTES = 1 << 30;
/** What a host accepts from a client: a statement and its parameters. */
export const MAX_REQUEST_BYTES = 64 << 20;
/** Unix socket paths longer than this do not fit `sockaddr_un` on every platform. */
const MAX_SOCKET_PATH = 100;
/** `/.memledger-host-` + mkdtemp's six characters + `/s`: where a host binds before its rename. */
const STAGING_EXTRA = 25;
/** The staging folder's name before mkdtemp's six characters. */
export const STAGING_PREFIX = '.memledger-host-';

export interface Hello {
  protocol: string;
  /** The store's directory, resolved: a client checks it is the one it asked for. */
  dir: string;
  pid: number;
}

/** A request: a statement, a transaction's step, a copy of the store, or a trust view. */
export type Request =
  | { id: number; op: 'query'; sql: string; params: readonly unknown[]; tx?: number }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'begin'; tx: number }
  | { id: number; op: 'commit'; tx: number }
  | { id: number; op: 'rollback'; tx: number }
  | { id: number; op: 'dump' }
  /** A subject's trust view, as the host keeps it (`SqlClient.hostView`). */
  | { id: number; op: 'view'; request: unknown }
  /** Stop, if this is the host's only client: a program takes the store over in process. */
  | { id: number; op: 'yield' };

/** A database error as it crosses the socket: its message and SQLSTATE. */
export interface WireError {
  message: string;
  code?: string;
  /** An EngineError's code and data, when the host's own check failed. */
  engineCode?: string;
  data?: Record<string, unknown>;
}

export type Answer =
  | {
      id: number;
      ok: true;
      rows?: unknown[];
      columns?: string[];
      dump?: Uint8Array;
      view?: unknown;
    }
  | { id: number; ok: false; error: WireError };

/** One message as a frame: its 4-byte length and its body, to be written one after the other. */
export function frame(message: unknown): [Buffer, Buffer] {
  const body = serialize(message);
  if (body.length > MAX_FRAME_BYTES) {
    throw new EngineError('INVALID_ARGUMENT', `a message of ${body.length} bytes is too large`);
  }
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return [head, body];
}

/** Writes one message to `socket` as a frame (throws before writing when it is too large). */
export function writeFrame(socket: { write(b: Buffer): unknown }, message: unknown): void {
  const [head, body] = frame(message);
  socket.write(head);
  socket.write(body);
}

/**
 * Cuts a byte stream into messages; throws on a frame over `max` bytes. Chunks are kept as they
 * come and joined once a frame is whole, so a large frame is copied once, not once per chunk.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): unknown[] {
    this.chunks.push(chunk);
    this.size += chunk.length;
    const messages: unknown[] = [];
    while (this.size >= 4) {
      const length = this.head().readUInt32BE(0);
      if (length > this.max) {
        throw new EngineError('INVALID_ARGUMENT', `a frame of ${length} bytes`);
      }
      if (this.size < 4 + length) break;
      const all =
        this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
      messages.push(deserialize(all.subarray(4, 4 + length)));
      const rest = all.subarray(4 + length);
      this.chunks = rest.length === 0 ? [] : [rest];
      this.size = rest.length;
    }
    return messages;
  }

  /** The first four bytes buffered (there are at least four). */
  private head(): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.length >= 4) return first;
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined;
  }
}

/** A directory's path with symlinks resolved, so every process names one store alike. */
export function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

/**
 * Where the host of the store `dir` listens: `memledger.sock` in the directory; or a file named
 * for the directory in a folder only this user may enter (`/tmp/memledger-<uid>/`, made 0700 by
 * the host and checked by clients) when the directory is not this user's alone to write (another
 * user could swap the host's staging folder there) or its path is too long for a socket (the
 * host binds at `<dir>/.memledger-host-<six random characters>/s` first). Every process computes the same path
 * from the directory alone (not from TMPDIR or the spelling of the path).
 */
export function socketPathFor(dir: string): string {
  const real = realDir(dir);
  const st = statSync(real, { throwIfNoEntry: false });
  const ownOnly = st === undefined || (st.uid === process.getuid?.() && (st.mode & 0o022) === 0);
  if (ownOnly && Buffer.byteLength(real) + STAGING_EXTRA <= MAX_SOCKET_PATH) {
    return join(real, SOCKET_FILE);
  }
  const tag = createHash('sha256').update(real).digest('hex').slice(0, 24);
  return join(privateSocketDir(), `${tag}.sock`);
}

/** The folder of sockets that cannot live in their store (see `socketPathFor`). */
export function privateSocketDir(): string {
  return join('/tmp', `memledger-${process.getuid?.() ?? 'user'}`);
}

export function isHello(message: unknown): message is Hello {
  const m = message as Partial<Hello> | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    m.protocol === HOST_PROTOCOL &&
    typeof m.dir === 'string' &&
    typeof m.pid === 'number'
  );
}
