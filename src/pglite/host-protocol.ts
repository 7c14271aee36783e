import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
export const HOST_PROTOCOL = 'memledger-store-host/1';
/** The socket's name inside the store directory. */
export const SOCKET_FILE = 'memledger.sock';
/** A frame larger than this is refused (a dump of a large store is the largest). */
export const MAX_FRAME_BYTES = 1 << 30;
/** Unix socket paths longer than this do not fit `sockaddr_un` on every platform. */
const MAX_SOCKET_PATH = 100;

export interface Hello {
  protocol: string;
  /** The store's directory, resolved: a client checks it is the one it asked for. */
  dir: string;
  pid: number;
}

/** A request: a statement, a transaction's step, or a copy of the store. */
export type Request =
  | { id: number; op: 'query'; sql: string; params: readonly unknown[]; tx?: number }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'begin'; tx: number }
  | { id: number; op: 'commit'; tx: number }
  | { id: number; op: 'rollback'; tx: number }
  | { id: number; op: 'dump' };

/** A database error as it crosses the socket: its message and SQLSTATE. */
export interface WireError {
  message: string;
  code?: string;
  /** An EngineError's code and data, when the host's own check failed. */
  engineCode?: string;
  data?: Record<string, unknown>;
}

export type Answer =
  | { id: number; ok: true; rows?: unknown[]; columns?: string[]; dump?: Uint8Array }
  | { id: number; ok: false; error: WireError };

/** One message as a frame. */
export function frame(message: unknown): Buffer {
  const body = serialize(message);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

/** Cuts a byte stream into messages; throws on a frame no host or client would send. */
export class FrameReader {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): unknown[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const messages: unknown[] = [];
    while (this.buffer.length >= 4) {
      const length = this.buffer.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) {
        throw new EngineError('INVALID_ARGUMENT', `a frame of ${length} bytes`);
      }
      if (this.buffer.length < 4 + length) break;
      messages.push(deserialize(this.buffer.subarray(4, 4 + length)));
      this.buffer = this.buffer.subarray(4 + length);
    }
    return messages;
  }
}

/**
 * Where the host of the store `dir` listens: `memledger.sock` in the directory, or, when that
 * path is too long for a Unix socket, a file named for the directory in a folder only this user
 * may enter (`<tmp>/memledger-<uid>/`, made 0700 by the host and checked by clients).
 */
export function socketPathFor(dir: string): string {
  const inside = join(dir, SOCKET_FILE);
  if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH) return inside;
  const tag = createHash('sha256').update(dir).digest('hex').slice(0, 24);
  return join(privateSocketDir(), `${tag}.sock`);
}

/** The folder of sockets whose store's path is too long (see `socketPathFor`). */
export function privateSocketDir(): string {
  return join(tmpdir(), `memledger-${process.getuid?.() ?? 'user'}`);
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
