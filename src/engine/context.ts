import { EngineError } from '../domain/errors.js';
import { requireId } from '../domain/turn.js';
import type { SqlClient } from '../store/sql-client.js';
import { SubjectSql } from '../store/subject-sql.js';

/**
 * What every module of the engine is built from: one store client, one clock, one id source,
 * one open guard and one way to resolve a subject. Modules receive a subject id only after
 * `requireSubject` has accepted it, so none of them checks subjects again.
 */
export interface EngineContext {
  readonly client: SqlClient;
  readonly clock: () => Date;
  readonly newId: () => string;
  /** The store's identity (store_meta). */
  readonly storeId: string;
  /** Throws ENGINE_CLOSED once the engine is closed. */
  assertOpen(): void;
  /** The subject's id when it exists: ENGINE_CLOSED, INVALID_ARGUMENT or SUBJECT_NOT_FOUND otherwise. */
  requireSubject(id: unknown): Promise<string>;
  /** Marks the engine closed; `assertOpen` throws from then on. */
  markClosed(): void;
  readonly closed: boolean;
}

export interface EngineContextConfig {
  client: SqlClient;
  clock: () => Date;
  newId: () => string;
  storeId: string;
}

export function subjectNotFound(id: string): EngineError {
  return new EngineError('SUBJECT_NOT_FOUND', `subject "${id}" does not exist`);
}

export function createEngineContext(config: EngineContextConfig): EngineContext {
  const { client } = config;
  const subjects = new SubjectSql(client);
  // Subjects are never deleted, so one that was found once exists for the engine's lifetime.
  const known = new Set<string>();
  let closed = false;
  const assertOpen = (): void => {
    if (closed) throw new EngineError('ENGINE_CLOSED', 'the engine has been closed');
  };
  const requireSubject = async (raw: unknown): Promise<string> => {
    assertOpen();
    const id = requireId(raw, 'subject');
    if (known.has(id)) return id;
    if ((await subjects.get(id)) === null) throw subjectNotFound(id);
    known.add(id);
    return id;
  };
  return {
    client,
    clock: config.clock,
    newId: config.newId,
    storeId: config.storeId,
    assertOpen,
    requireSubject,
    markClosed() {
      closed = true;
    },
    get closed() {
      return closed;
    },
  };
}
