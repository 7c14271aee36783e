import { hasLoneSurrogate } from './input.js';

/** The SHA-256 of a field as it arrived, with its full length (UTF-16 code units). */
export interface FieldDigest {
  length: number;
  /**
   * Hex SHA-256 of the field's UTF-8 bytes (WTF-8 for a lone surrogate, which UTF-8 cannot
   * encode); for the proposal, of its full JSON text as `JSON.stringify` writes it, or null when
   * it has none (a cycle, a BigInt), with `unencodable` saying why.
   */
  sha256: string | null;
  unencodable?: string;
}

/** What the log kept of a drop in full: each field's digest, and whether anything was cut. */
export interface DroppedDigest {
  /** Whether any stored field (or the stored rendering of the proposal) differs from the input. */
  truncated: boolean;
  slot: FieldDigest;
  text: FieldDigest;
  proposal: FieldDigest;
}

/**
 * A proposal the write gate refused, as logged (append-only): it never reached the pile, and the
 * log says why, so a refusal is visible rather than silent. Every field is bounded (see
 * `DROPPED_LIMITS`): slot, text and reason keep a prefix, the proposal a bounded rendering, and
 * `digest` the full fields' SHA-256.
 */
export interface DroppedProposal {
  id: string;
  /** The session it was proposed in, if any. */
  sessionId: string | null;
  slot: string;
  text: string;
  /** The proposal as it arrived, rendered within `DROPPED_LIMITS` (exact when digest says so). */
  proposal: unknown;
  /** The gate's drop code (one of `DROP_CODES`). */
  code: string;
  /** The reason, in words. */
  reason: string;
  /** Who proposed it (the agent, a reflection pass, …). */
  proposedBy: string;
  droppedAt: Date;
  /** Null for entries logged before digests were kept. */
  digest: DroppedDigest | null;
}

/** How many proposals were dropped with one code on one calendar day (`gate.droppedByDay`). */
export interface DroppedDay {
  /** YYYY-MM-DD in the subject's time zone. */
  day: string;
  code: string;
  count: number;
}

/** A drop as the gate hands it to the log: fields as they arrived, unbounded. */
export type NewDroppedProposal = Omit<DroppedProposal, 'digest'>;

/** How much of a dropped proposal the log keeps. */
export const DROPPED_LIMITS = {
  /** Characters kept of each string: slot, text, reason, and every string inside the proposal. */
  prefix: 2_048,
  /** Characters of strings (and keys) kept in one proposal's rendering, all together. */
  renderChars: 16_384,
  /** Levels of nesting kept; deeper objects and lists become a marker string. */
  depth: 8,
  /** Entries kept of each object or list; the rest are counted in a marker. */
  entries: 100,
  /** Values (objects, lists and scalars) kept in one rendering; the rest become markers. */
  values: 1_000,
} as const;

/**
 * A string as the store can keep it: cut to `max` code units (never between the halves of a
 * pair), NUL and lone surrogates replaced by U+FFFD. `changed` says whether it differs.
 */
export function storableString(value: string, max: number): { text: string; changed: boolean } {
  let text = value;
  if (text.length > max) {
    const code = text.charCodeAt(max - 1);
    text = text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
  }
  if (text.includes('\u0000') || hasLoneSurrogate(text)) {
    text = text
      .split('\u0000')
      .join('\uFFFD')
      .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  }
  return { text, changed: text !== value };
}

function read(fn: () => unknown): unknown {
  try {
    return fn();
  } catch {
    return '[unreadable]';
  }
}

/**
 * A JSON-safe rendering of any value within `DROPPED_LIMITS`: strings cut and cleaned, BigInts
 * and other non-JSON values written as strings, cycles and deep nesting replaced by markers.
 * Recursion is bounded by `DROPPED_LIMITS.depth`, so any input renders.
 */
export function renderBounded(value: unknown): { value: unknown; changed: boolean } {
  let budget: number = DROPPED_LIMITS.renderChars;
  let values: number = DROPPED_LIMITS.values;
  let changed = false;
  const onPath = new Set<object>();
  const str = (s: string): string => {
    const cut = storableString(s, Math.min(DROPPED_LIMITS.prefix, Math.max(budget, 0)));
    budget -= cut.text.length;
    if (cut.changed) changed = true;
    return cut.text;
  };
  const marker = (text: string): string => {
    changed = true;
    return text;
  };
  const render = (v: unknown, depth: number): unknown => {
    values -= 1;
    if (values < 0) return marker('[…]');
    switch (typeof v) {
      case 'string':
        return str(v);
      case 'number':
        return Number.isFinite(v) ? v : marker(String(v));
      case 'boolean':
        return v;
      case 'bigint':
        return marker(`${v}n`);
      case 'undefined':
        return marker('[undefined]');
      case 'symbol':
      case 'function':
        return marker(`[${typeof v}]`);
    }
    if (v === null) return null;
    const node = v as object;
    if (onPath.has(node)) return marker('[cycle]');
    if (depth >= DROPPED_LIMITS.depth) {
      return marker(`[nested deeper than ${DROPPED_LIMITS.depth} levels]`);
    }
    if (node instanceof Date) {
      return Number.isNaN(node.getTime()) ? marker('[Invalid Date]') : node.toISOString();
    }
    onPath.add(node);
    try {
      if (Array.isArray(node)) {
        const length = read(() => node.length) as number;
        const out: unknown[] = [];
        for (let i = 0; i < Math.min(length, DROPPED_LIMITS.entries); i++) {
          out.push(
            render(
              read(() => node[i] as unknown),
              depth + 1,
            ),
          );
        }
        if (length > DROPPED_LIMITS.entries)
          out.push(marker(`[${length - DROPPED_LIMITS.entries} more]`));
        return out;
      }
      const keys = read(() => Object.keys(node));
      if (!Array.isArray(keys)) return marker('[unreadable]');
      const out: Record<string, unknown> = {};
      for (const key of keys.slice(0, DROPPED_LIMITS.entries) as string[]) {
        out[str(key)] = render(
          read(() => (node as Record<string, unknown>)[key]),
          depth + 1,
        );
      }
      if (keys.length > DROPPED_LIMITS.entries) {
        out['…'] = marker(`[${keys.length - DROPPED_LIMITS.entries} more keys]`);
      }
      return out;
    } finally {
      onPath.delete(node);
    }
  };
  const out = render(value, 0);
  return { value: out, changed };
}

type Prepared =
  | { kind: 'fail'; reason: string }
  | { kind: 'skip' }
  | { kind: 'text'; text: string }
  | { kind: 'container'; node: object; keys: string[] | null; length: number };

/** One step of JSON.stringify's SerializeJSONProperty, without recursing. */
function prepare(holder: Record<string, unknown>, key: string): Prepared {
  let v = holder[key];
  if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') v = (toJSON as (k: string) => unknown).call(v, key);
  }
  if (v instanceof Number) v = Number(v);
  else if (v instanceof String) v = String(v);
  else if (v instanceof Boolean) v = v.valueOf();
  if (v === null) return { kind: 'text', text: 'null' };
  switch (typeof v) {
    case 'boolean':
    case 'string':
      return { kind: 'text', text: JSON.stringify(v) };
    case 'number':
      return { kind: 'text', text: Number.isFinite(v) ? JSON.stringify(v) : 'null' };
    case 'bigint':
      return { kind: 'fail', reason: 'holds a BigInt' };
    case 'object': {
      if (Array.isArray(v)) return { kind: 'container', node: v, keys: null, length: v.length };
      const keys = Object.keys(v);
      return { kind: 'container', node: v, keys, length: keys.length };
    }
    default:
      return { kind: 'skip' };
  }
}

/**
 * Writes `value` as JSON, exactly as `JSON.stringify(value)` would, in pieces handed to `emit`,
 * without recursion: a 100,000-deep value encodes where JSON.stringify overflows the stack.
 * Returns null, or why the value has no JSON (a cycle, a BigInt, a getter or toJSON that threw).
 */
export function encodeJson(value: unknown, emit: (piece: string) => void): string | null {
  try {
    const first = prepare({ '': value }, '');
    if (first.kind === 'fail') return first.reason;
    if (first.kind === 'skip') return 'is not a JSON value';
    if (first.kind === 'text') {
      emit(first.text);
      return null;
    }
    const onPath = new Set<object>([first.node]);
    const stack: Array<Extract<Prepared, { kind: 'container' }> & { i: number; n: number }> = [
      { ...first, i: 0, n: 0 },
    ];
    emit(first.keys === null ? '[' : '{');
    while (stack.length > 0) {
      const f = stack[stack.length - 1] as (typeof stack)[number];
      if (f.i >= f.length) {
        emit(f.keys === null ? ']' : '}');
        stack.pop();
        onPath.delete(f.node);
        continue;
      }
      const key = f.keys === null ? String(f.i) : (f.keys[f.i] as string);
      f.i += 1;
      const p = prepare(f.node as Record<string, unknown>, key);
      if (p.kind === 'fail') return p.reason;
      if (p.kind === 'skip' && f.keys !== null) continue;
      emit((f.n > 0 ? ',' : '') + (f.keys === null ? '' : `${JSON.stringify(key)}:`));
      f.n += 1;
      if (p.kind === 'skip') emit('null');
      else if (p.kind === 'text') emit(p.text);
      else {
        if (onPath.has(p.node)) return 'refers to itself (a cycle)';
        onPath.add(p.node);
        stack.push({ ...p, i: 0, n: 0 });
        emit(p.keys === null ? '[' : '{');
      }
    }
    return null;
  } catch {
    return 'cannot be read (a property or toJSON threw)';
  }
}
