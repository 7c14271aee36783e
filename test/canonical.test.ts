import { describe, expect, it } from 'vitest';
import {
  canonicalEncode,
  encodeCanonicalString,
  type CanonicalValue,
} from '../src/domain/canonical.js';
import { EngineError } from '../src/domain/errors.js';

function expectRefused(value: unknown): void {
  let caught: unknown;
  try {
    canonicalEncode(value as CanonicalValue);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(EngineError);
  expect((caught as EngineError).code).toBe('INVALID_ARGUMENT');
}

describe('canonicalEncode', () => {
  it('encodes scalars without whitespace', () => {
    expect(canonicalEncode(null)).toBe('null');
    expect(canonicalEncode(true)).toBe('true');
    expect(canonicalEncode(false)).toBe('false');
    expect(canonicalEncode(0)).toBe('0');
    expect(canonicalEncode(-0)).toBe('0');
    expect(canonicalEncode(-42)).toBe('-42');
    expect(canonicalEncode(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    expect(canonicalEncode('')).toBe('""');
    expect(canonicalEncode([])).toBe('[]');
    expect(canonicalEncode({})).toBe('{}');
    expect(canonicalEncode([1, 'a', null, [true], { b: 2 }])).toBe('[1,"a",null,[true],{"b":2}]');
  });

  it('does not depend on key insertion order, at any depth', () => {
    const a = { b: 1, a: { y: [1, { q: 1, p: 2 }], x: 'x' }, c: null };
    const b = { c: null, a: { x: 'x', y: [1, { p: 2, q: 1 }] }, b: 1 };
    expect(canonicalEncode(a)).toBe(canonicalEncode(b));
    expect(canonicalEncode(a)).toBe('{"a":{"x":"x","y":[1,{"p":2,"q":1}]},"b":1,"c":null}');
  });

  it('sorts keys by UTF-16 code units, not by locale', () => {
    // 'B' (0x42) < '_' (0x5f) < 'a' (0x61) < 'é' (0xe9) < U+1F600 (surrogates 0xd83d…) < U+FF21.
    const value = { a: 1, é: 2, B: 3, _: 4, '\u{1F600}': 5, '\uFF21': 6 };
    expect(canonicalEncode(value)).toBe('{"B":3,"_":4,"a":1,"é":2,"\u{1F600}":5,"\uFF21":6}');
  });

  it('keeps array order', () => {
    expect(canonicalEncode([3, 1, 2])).toBe('[3,1,2]');
    expect(canonicalEncode([3, 1, 2])).not.toBe(canonicalEncode([1, 2, 3]));
  });

  it('escapes quote, backslash and controls, with the short forms JSON has', () => {
    expect(encodeCanonicalString('say "hi" \\ bye')).toBe('"say \\"hi\\" \\\\ bye"');
    expect(encodeCanonicalString('\b\f\n\r\t')).toBe('"\\b\\f\\n\\r\\t"');
    expect(encodeCanonicalString('\u0000\u0001\u001f')).toBe('"\\u0000\\u0001\\u001f"');
    expect(encodeCanonicalString('\u000b')).toBe('"\\u000b"');
  });

  it('leaves every other character as-is (no \\u escaping of non-ASCII, DEL or slash)', () => {
    const text = 'café – “quoted” / \u007f \u2028 \u{1F600} 日本';
    expect(encodeCanonicalString(text)).toBe('"' + text + '"');
  });

  it('escapes a lone surrogate, so it cannot collide with U+FFFD once hashed as UTF-8', () => {
    expect(encodeCanonicalString('a\ud800b')).toBe('"a\\ud800b"');
    expect(encodeCanonicalString('\udc00')).toBe('"\\udc00"');
    expect(encodeCanonicalString('x\ud83d')).toBe('"x\\ud83d"');
    expect(encodeCanonicalString('\ud800')).not.toBe(encodeCanonicalString('\ufffd'));
  });

  it('produces text that JSON.parse reads back to the same value', () => {
    const value = {
      note: 'line one\nline "two"\t\\ \u0001 end',
      n: [0, -1, 123456789],
      nested: { ok: true, none: null, emoji: '\u{1F600}' },
    };
    expect(JSON.parse(canonicalEncode(value))).toEqual(value);
  });

  it('escapes keys like strings', () => {
    expect(canonicalEncode({ 'a"b\n': 1 })).toBe('{"a\\"b\\n":1}');
  });

  it('rejects floats, NaN, infinities and unsafe integers', () => {
    expectRefused(1.5);
    expectRefused(NaN);
    expectRefused(Infinity);
    expectRefused(-Infinity);
    expectRefused(2 ** 53);
    expectRefused({ a: [1, 0.1] });
  });

  it('rejects undefined, wherever it appears', () => {
    expectRefused(undefined);
    expectRefused({ a: undefined });
    expectRefused([1, undefined]);
    // eslint-disable-next-line no-sparse-arrays
    expectRefused([1, , 3]);
  });

  it('rejects non-plain objects, functions, bigints, symbols and cycles', () => {
    expectRefused(new Date(0));
    expectRefused(new Map());
    expectRefused(() => 1);
    expectRefused(BigInt(1));
    expectRefused(Symbol('s'));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expectRefused(cyclic);
  });

  it('accepts a shared, non-cyclic reference', () => {
    const shared = { x: 1 };
    expect(canonicalEncode({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it('accepts null-prototype objects', () => {
    const value = Object.assign(Object.create(null) as Record<string, CanonicalValue>, { k: 'v' });
    expect(canonicalEncode(value)).toBe('{"k":"v"}');
  });
});
