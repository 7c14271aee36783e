import { describe, expect, it } from 'vitest';
import { EngineError, type ErrorCode } from '../src/domain/errors.js';
import {
  MAX_CONTENT_LENGTH,
  TURN_ROLES,
  parseRole,
  requireId,
  requireText,
} from '../src/domain/turn.js';

function expectEngineError(fn: () => unknown, code: ErrorCode): EngineError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(EngineError);
  const error = caught as EngineError;
  expect(error.code).toBe(code);
  expect(error.name).toBe('EngineError');
  expect(error.message.length).toBeGreaterThan(0);
  return error;
}

describe('parseRole', () => {
  it('accepts every turn role', () => {
    for (const role of TURN_ROLES) expect(parseRole(role)).toBe(role);
    expect([...TURN_ROLES].sort()).toEqual(['assistant', 'system', 'tool', 'user']);
  });

  it('rejects an unknown role with UNKNOWN_ROLE and names the valid ones', () => {
    const error = expectEngineError(() => parseRole('bot'), 'UNKNOWN_ROLE');
    expect(error.message).toContain('bot');
    for (const role of TURN_ROLES) expect(error.message).toContain(role);
    expectEngineError(() => parseRole('assistants'), 'UNKNOWN_ROLE');
    expectEngineError(() => parseRole(' user'), 'UNKNOWN_ROLE');
  });

  it('rejects an empty or missing role with UNKNOWN_ROLE', () => {
    expectEngineError(() => parseRole(''), 'UNKNOWN_ROLE');
    expectEngineError(() => parseRole(undefined), 'UNKNOWN_ROLE');
  });
});

describe('requireText', () => {
  it('returns non-empty text unchanged', () => {
    expect(requireText('hello')).toBe('hello');
    expect(requireText('  padded text \n')).toBe('  padded text \n');
  });

  it('rejects empty, whitespace-only or missing text with EMPTY_TEXT', () => {
    expectEngineError(() => requireText(''), 'EMPTY_TEXT');
    expectEngineError(() => requireText('   '), 'EMPTY_TEXT');
    expectEngineError(() => requireText('\n\t \r\n'), 'EMPTY_TEXT');
    expectEngineError(() => requireText(undefined), 'EMPTY_TEXT');
  });

  it('rejects text over the maximum length with INVALID_ARGUMENT', () => {
    expect(requireText('x'.repeat(MAX_CONTENT_LENGTH))).toHaveLength(MAX_CONTENT_LENGTH);
    expectEngineError(() => requireText('x'.repeat(MAX_CONTENT_LENGTH + 1)), 'INVALID_ARGUMENT');
  });
});

describe('requireId', () => {
  it('accepts printable ids', () => {
    for (const id of ['s1', 'session-2026.08.05', 'user@example.com', 'a:b_c-d', 'Z']) {
      expect(requireId(id, 'session')).toBe(id);
      expect(requireId(id, 'subject')).toBe(id);
    }
    expect(requireId('a'.repeat(128), 'session')).toBe('a'.repeat(128));
  });

  it('requires a session id with SESSION_REQUIRED', () => {
    expectEngineError(() => requireId(undefined, 'session'), 'SESSION_REQUIRED');
    expectEngineError(() => requireId('', 'session'), 'SESSION_REQUIRED');
  });

  it('requires a subject id with INVALID_ARGUMENT', () => {
    expectEngineError(() => requireId(undefined, 'subject'), 'INVALID_ARGUMENT');
    expectEngineError(() => requireId('', 'subject'), 'INVALID_ARGUMENT');
  });

  it('rejects ids with bad characters with INVALID_ARGUMENT', () => {
    for (const id of ['has space', 'a/b', 'semi;colon', 'new\nline', 'tab\t', 'quote"', 'é']) {
      expectEngineError(() => requireId(id, 'session'), 'INVALID_ARGUMENT');
      expectEngineError(() => requireId(id, 'subject'), 'INVALID_ARGUMENT');
    }
  });

  it('rejects ids that start with punctuation or are too long', () => {
    for (const id of ['-leading', '.dot', '@at', ':colon', '_under']) {
      expectEngineError(() => requireId(id, 'session'), 'INVALID_ARGUMENT');
    }
    expectEngineError(() => requireId('a'.repeat(129), 'session'), 'INVALID_ARGUMENT');
  });

  it('names the kind of id in the error', () => {
    expect(
      expectEngineError(() => requireId('a b', 'session'), 'INVALID_ARGUMENT').message,
    ).toMatch(/session/);
    expect(
      expectEngineError(() => requireId('a b', 'subject'), 'INVALID_ARGUMENT').message,
    ).toMatch(/subject/);
  });
});
