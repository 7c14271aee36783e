import { oneLine } from '../../src/rules.js';
import { invalidJson } from './http-errors.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * The first key that appears twice in one object of a JSON text, at any depth, or null when none
 * does. `text` must already be valid JSON (JSON.parse accepted it), so only strings, brackets and
 * commas need reading. Keys compare as JSON.parse reads them, after unescaping (`"a"` and
 * `"\u0061"` are one key). One pass, without a reviver: linear in the length of the text.
 */
export function duplicateKey(text: string): string | null {
  // one frame per open container: the keys seen so far in an object, null for an array
  const frames: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === QUOTE) {
      let end = i + 1;
      let escaped = false;
      while (end < text.length && text.charCodeAt(end) !== QUOTE) {
        if (text.charCodeAt(end) === BACKSLASH) {
          escaped = true;
          end += 1;
        }
        end += 1;
      }
      const keys = frames[frames.length - 1];
      if (expectKey && keys !== undefined && keys !== null) {
        const key = escaped
          ? (JSON.parse(text.slice(i, end + 1)) as string)
          : text.slice(i + 1, end);
        if (keys.has(key)) return key;
        keys.add(key);
        expectKey = false;
      }
      i = end;
    } else if (ch === OPEN_OBJECT) {
      frames.push(new Set());
      expectKey = true;
    } else if (ch === OPEN_ARRAY) {
      frames.push(null);
      expectKey = false;
    } else if (ch === CLOSE_OBJECT || ch === CLOSE_ARRAY) {
      frames.pop();
      expectKey = false;
    } else if (ch === COMMA) {
      expectKey = (frames[frames.length - 1] ?? null) !== null;
    }
  }
  return null;
}

/**
 * Refuses a JSON text (already valid JSON) in which one object names a key twice, at any depth:
 * JSON.parse would keep the last silently, so a checker that read the first and the engine that
 * stores the last could disagree. INVALID_JSON.
 */
export function refuseDuplicateKeys(text: string): void {
  const key = duplicateKey(text);
  if (key === null) return;
  const flat = oneLine(key);
  const shown = flat.length > 64 ? `${flat.slice(0, 64)}…` : flat;
  throw invalidJson(`the body names the key "${shown}" twice in one object`);
}
