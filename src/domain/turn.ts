import { EngineError } from './errors.js';
import { INPUT_LIMITS, invalidField, stringProblem } from './input.js';
import type { Receipt } from './receipt.js';

/** Who a turn is from. */
export const TURN_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
/** One of `TURN_ROLES`. */
export type TurnRole = (typeof TURN_ROLES)[number];

/** One recorded turn of a session, with its receipt when it is an assistant turn. */
export interface Turn {
  id: string;
  subjectId: string;
  sessionId: string;
  /** Per-session position, from 1, counting every recorded turn. */
  seq: number;
  role: TurnRole;
  content: string;
  /** The host recorded this user turn as a correction of the agent. */
  corrective: boolean;
  /** Assistant turns always carry one; other roles never do. */
  receipt: Receipt | null;
  recordedAt: Date;
  /** Who spoke, when a role has more than one person behind it; null otherwise. */
  speaker: string | null;
  /**
   * Set on a tombstone: this turn was forgotten (its words and receipt are gone), by the owner's
   * signed forget, or under the owner's policy at the user's request or by the retention rule.
   */
  forgotten?: { at: Date; forgetId: string; by: ForgottenBy };
}

/** Who forgot a turn: the owner (a signed forget), or the owner's policy (`request`, `retention`). */
export type ForgottenBy = 'owner' | 'request' | 'retention';

const FORGOTTEN_BY: Record<ForgottenBy, string> = {
  owner: 'by the owner',
  request: "at the user's request",
  retention: "under the owner's retention rule",
};

/** What a history shows for a forgotten turn, in place of its words. */
export const forgottenLine = (
  t: Pick<Turn, 'seq'> & { forgotten: { at: Date; by?: ForgottenBy } },
): string =>
  `[turn ${t.seq}: forgotten ${FORGOTTEN_BY[t.forgotten.by ?? 'owner']} on ${t.forgotten.at.toISOString().slice(0, 10)}]`;

/** A role from a string: UNKNOWN_ROLE when it is missing or not one of `TURN_ROLES`. */
export function parseRole(value: string | undefined): TurnRole {
  if (value === undefined || value === '') {
    throw new EngineError('UNKNOWN_ROLE', `a role is required: one of ${TURN_ROLES.join(', ')}`);
  }
  const role = TURN_ROLES.find((r) => r === value);
  if (role === undefined) {
    // A JavaScript caller may pass anything: show a string, never interpolate a symbol or object.
    const shown = typeof value === 'string' ? `"${value.slice(0, 64)}"` : `a ${typeof value}`;
    throw new EngineError(
      'UNKNOWN_ROLE',
      `unknown role ${shown}: use one of ${TURN_ROLES.join(', ')}`,
    );
  }
  return role;
}

/** The longest turn text accepted, in characters. */
export const MAX_CONTENT_LENGTH = INPUT_LIMITS.turnLength;
/** The longest speaker name accepted, in characters. */
export const MAX_SPEAKER_LENGTH = 200;

/**
 * A speaker's name: trimmed, non-empty, one line, at most 200 characters, with no NUL or lone
 * surrogate; absent is null.
 */
export function parseSpeaker(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string') {
    throw new EngineError('INVALID_ARGUMENT', 'speaker must be a string', {
      data: { field: 'speaker' },
    });
  }
  const name = value.trim();
  if (name === '' || name.length > MAX_SPEAKER_LENGTH || /[\r\n]/.test(name)) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `a speaker is a name of 1 to ${MAX_SPEAKER_LENGTH} characters on one line`,
    );
  }
  const problem = stringProblem(name, MAX_SPEAKER_LENGTH);
  if (problem !== null) throw invalidField('speaker', problem);
  return name;
}

/**
 * A turn's text: EMPTY_TEXT when blank; INVALID_ARGUMENT when over `MAX_CONTENT_LENGTH` or when
 * it holds a NUL or a lone surrogate (which the store cannot keep as sent).
 */
export function requireText(content: unknown): string {
  if (content !== undefined && typeof content !== 'string') {
    throw new EngineError('INVALID_ARGUMENT', 'content must be a string', {
      data: { field: 'content' },
    });
  }
  if (content === undefined || content.trim().length === 0) {
    throw new EngineError('EMPTY_TEXT', 'turn text is empty');
  }
  if (content.length > MAX_CONTENT_LENGTH) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `turn text is longer than ${MAX_CONTENT_LENGTH} characters`,
      { data: { field: 'content' } },
    );
  }
  const problem = stringProblem(content, MAX_CONTENT_LENGTH);
  if (problem !== null) {
    throw new EngineError('INVALID_ARGUMENT', `turn text ${problem}`, {
      data: { field: 'content' },
    });
  }
  return content;
}

const ID_PATTERN = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,${INPUT_LIMITS.idLength - 1}}$`);

/** Subject and session ids are opaque but printable, so they survive shells, URLs and logs. */
export function requireId(value: unknown, what: 'subject' | 'session'): string {
  if (value === undefined || value === null || value === '') {
    if (what === 'session') throw new EngineError('SESSION_REQUIRED', 'a session id is required');
    throw new EngineError('INVALID_ARGUMENT', 'a subject id is required');
  }
  if (typeof value !== 'string') {
    throw new EngineError('INVALID_ARGUMENT', `a ${what} id must be a string`);
  }
  if (!ID_PATTERN.test(value)) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `invalid ${what} id "${value}": use 1-128 letters, digits, and _ . : @ - (starting with a letter or digit)`,
    );
  }
  return value;
}
