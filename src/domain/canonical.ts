import { EngineError } from './errors.js';

/**
 * The values the canonical encoder accepts: JSON without floats. Numbers must be safe integers,
 * because a float's decimal spelling is a choice, and a hashed byte string must have exactly one.
 */
export type CanonicalValue =
  | string
  | number
  | boolean
  | null
  | readonly CanonicalValue[]
  | { readonly [key: string]: CanonicalValue };

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
};

function hex4(code: number): string {
  return '\\u' + code.toString(16).padStart(4, '0');
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * RFC 8259 string with one fixed escaping: `"`, `\`, and controls below U+0020 (short forms where
 * JSON has them, `\u00XX` otherwise); everything else as-is. A lone surrogate is written as
 * `\udXXX`, as well-formed `JSON.stringify` does: left raw it would become U+FFFD in UTF-8, and
 * two different strings would hash the same.
 */
export function encodeCanonicalString(value: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    let escaped: string | undefined;
    if (code === 0x22 || code === 0x5c || code < 0x20) {
      escaped = SHORT_ESCAPES[code] ?? hex4(code);
    } else if (isHighSurrogate(code)) {
      if (isLowSurrogate(value.charCodeAt(i + 1))) i++;
      else escaped = hex4(code);
    } else if (isLowSurrogate(code)) {
      escaped = hex4(code);
    }
    if (escaped !== undefined) {
      out += value.slice(start, i) + escaped;
      start = i + 1;
    }
  }
  return out + value.slice(start) + '"';
}

function fail(path: string, what: string): never {
  throw new EngineError('INVALID_ARGUMENT', `canonical encoding: ${what} at ${path}`);
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function encodeAt(value: unknown, path: string, open: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return encodeCanonicalString(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isSafeInteger(value)) fail(path, `${String(value)} is not a safe integer`);
      return String(value); // -0 prints as "0"
    case 'undefined':
      return fail(path, 'undefined is not encodable');
    case 'object':
      break;
    default:
      return fail(path, `a ${typeof value} is not encodable`);
  }
  if (value === null) return 'null';
  if (open.has(value)) fail(path, 'a cycle');
  open.add(value);
  let out: string;
  if (Array.isArray(value)) {
    const items: string[] = [];
    // Indexed, not map(): a hole in a sparse array is undefined and must be refused.
    for (let i = 0; i < value.length; i++) items.push(encodeAt(value[i], `${path}[${i}]`, open));
    out = '[' + items.join(',') + ']';
  } else if (isPlainObject(value)) {
    const record = value as Record<string, unknown>;
    // Default sort compares UTF-16 code units, which is the order the encoding promises.
    const keys = Object.keys(record).sort();
    out =
      '{' +
      keys
        .map((k) => encodeCanonicalString(k) + ':' + encodeAt(record[k], `${path}.${k}`, open))
        .join(',') +
      '}';
  } else {
    fail(path, 'only plain objects and arrays are encodable');
  }
  open.delete(value);
  return out;
}

/**
 * The one deterministic encoding of a value: keys sorted by UTF-16 code units, no whitespace,
 * fixed string escaping. Equal values give equal strings, so hashes and signatures over them hold.
 * Throws INVALID_ARGUMENT on a float, NaN, undefined, a cycle, or a non-plain object.
 */
export function canonicalEncode(value: CanonicalValue): string {
  return encodeAt(value, '$', new Set());
}
