import { EngineError } from './errors.js';

/** A conversation of one subject: turns are numbered from 1 within it. */
export interface Session {
  id: string;
  subjectId: string;
  title: string | null;
  /** How many turns the session has recorded (the last seq). */
  turnCount: number;
  createdAt: Date;
}

/** Another subject's session reads exactly like one that does not exist. */
export function sessionNotFound(sessionId: string): EngineError {
  return new EngineError('SESSION_NOT_FOUND', `no session "${sessionId}"`);
}
