import { describe, expect, it } from 'vitest';
import { UTILITY_KINDS, detectUtility } from '../src/domain/utility.js';

describe('detectUtility', () => {
  it('detects a title generation by its prefix', () => {
    expect(detectUtility('__title__ Write a 3-6 word title for this chat', false)).toBe('title');
    expect(detectUtility('__title__', false)).toBe('title');
  });

  it('detects an insight pass by its prefix, after leading whitespace', () => {
    expect(detectUtility('  __insight__', false)).toBe('insight');
    expect(detectUtility('\n\t__insight__ summarise the session', false)).toBe('insight');
  });

  it('treats an explicitly flagged request as a utility', () => {
    expect(detectUtility('Write a 3-6 word title for this conversation.', true)).toBe('utility');
    expect(detectUtility('', true)).toBe('utility');
  });

  it('never records a prefixed request as conversation, flagged or not', () => {
    expect(detectUtility('__title__ x', true)).not.toBeNull();
    expect(detectUtility('__insight__ x', true)).not.toBeNull();
  });

  it('returns null for ordinary text', () => {
    expect(detectUtility('What did I say my favourite colour was?', false)).toBeNull();
    expect(detectUtility('', false)).toBeNull();
    expect(detectUtility('   ', false)).toBeNull();
  });

  it('returns null when the prefix is in the middle of the text', () => {
    expect(detectUtility('Please explain what __title__ means', false)).toBeNull();
    expect(detectUtility('a __insight__', false)).toBeNull();
  });

  it('returns null for near-miss prefixes', () => {
    expect(detectUtility('_title_ hello', false)).toBeNull();
    expect(detectUtility('title: hello', false)).toBeNull();
    expect(detectUtility('__insight hello', false)).toBeNull();
  });

  it('only ever returns one of the declared kinds', () => {
    const inputs: Array<[string, boolean]> = [
      ['__title__ a', false],
      ['__insight__ b', false],
      ['plain', true],
    ];
    for (const [content, flagged] of inputs) {
      expect(UTILITY_KINDS).toContain(detectUtility(content, flagged));
    }
  });
});
