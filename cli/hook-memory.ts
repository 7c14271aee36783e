import { SERVER_ERROR_CODES, ServerError, type ServerErrorCode } from '../server/server-errors.js';
import type { HostReceiptReport, SubjectHandle, TurnRole } from '../src/index.js';
import { ERROR_CODES, EngineError, isEngineError, type ErrorCode } from '../src/domain/errors.js';
import { CliError } from './errors.js';

/** What a hook reads and writes: a session, its last turns, a new turn, the arrival. */
export interface HookMemory {
  /** The session, or null when it does not exist. */
  session(id: string): Promise<{ id: string; turnCount: number } | null>;
  /** Makes the session; SESSION_EXISTS when another hook made it a moment ago. */
  createSession(id: string, title: string): Promise<{ id: string; turnCount: number }>;
  lastTurns(
    sessionId: string,
    n: number,
  ): Promise<Array<{ seq: number; role: TurnRole; content: string }>>;
  addTurn(input: {
    sessionId: string;
    role: TurnRole;
    content: string;
    receipt?: HostReceiptReport;
    at?: Date;
  }): Promise<{ recorded: boolean; seq: number | null }>;
  arrivalText(input: { surface: string; sessionId: string }): Promise<string>;
}

/** A local store's subject, through its handle. */
export function handleMemory(me: SubjectHandle): HookMemory {
  return {
    async session(id) {
      try {
        return await me.sessions.get(id);
      } catch (err) {
        if (isEngineError(err) && err.code === 'SESSION_NOT_FOUND') return null;
        throw err;
      }
    },
    createSession: (id, title) => me.sessions.create({ id, title }),
    lastTurns: (sessionId, n) => me.history.turns(sessionId, { last: n }),
    async addTurn(input) {
      const r = await me.turns.add(input);
      return { recorded: r.recorded, seq: r.recorded ? r.turn.seq : null };
    },
    arrivalText: async (input) => (await me.arrival.assemble(input)).text,
  };
}

/** The error a server's answer names: the engine's code or a face's (any other is INTERNAL). */
function answeredError(code: unknown, message: string): Error {
  if ((SERVER_ERROR_CODES as readonly unknown[]).includes(code))
    return new ServerError(code as ServerErrorCode, message);
  const known = (ERROR_CODES as readonly unknown[]).includes(code);
  return new EngineError(known ? (code as ErrorCode) : 'INTERNAL', message);
}

/**
 * A running `memledger serve`, through its HTTP API as one token: what a hook uses while the
 * server holds an embedded store open (one process per data directory).
 */
export function httpMemory(baseUrl: string, token: string): HookMemory {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(new URL(path, base), {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new CliError(
        'SERVER_UNREACHABLE',
        `cannot reach memledger serve at ${base}: ${(err as Error).message}`,
      );
    }
    const text = await res.text();
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new CliError(
        'SERVER_UNREACHABLE',
        `${base} answered ${res.status} with something that is not memledger's JSON`,
      );
    }
    if (!res.ok) {
      const e = (doc as { error?: { code?: unknown; message?: unknown } }).error;
      throw answeredError(
        e?.code,
        typeof e?.message === 'string' ? e.message : `HTTP ${res.status}`,
      );
    }
    return doc as T;
  };
  const seg = encodeURIComponent;
  return {
    async session(id) {
      try {
        return await call<{ id: string; turnCount: number }>('GET', `v1/sessions/${seg(id)}`);
      } catch (err) {
        if (isEngineError(err) && err.code === 'SESSION_NOT_FOUND') return null;
        throw err;
      }
    },
    createSession: (id, title) =>
      call<{ id: string; turnCount: number }>('POST', 'v1/sessions', { id, title }),
    lastTurns: async (sessionId, n) =>
      (
        await call<{ turns: Array<{ seq: number; role: TurnRole; content: string }> }>(
          'GET',
          `v1/sessions/${seg(sessionId)}/turns?last=${n}&limit=${n}`,
        )
      ).turns,
    async addTurn({ sessionId, at, ...rest }) {
      const r = await call<{ recorded: boolean; turn?: { seq: number } | null }>(
        'POST',
        `v1/sessions/${seg(sessionId)}/turns`,
        { ...rest, ...(at === undefined ? {} : { at: at.toISOString() }) },
      );
      return { recorded: r.recorded, seq: r.turn?.seq ?? null };
    },
    arrivalText: async (input) => (await call<{ text: string }>('POST', 'v1/arrival', input)).text,
  };
}
