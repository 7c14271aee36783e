import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { Receipt } from '../http/entities.js';
import { EngineError, INPUT_LIMITS } from '../../src/index.js';

/** A NUL or a lone surrogate: PostgreSQL text cannot hold either as sent (docs/API.md, Input limits). */
function unstorable(s: string): boolean {
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c === 0) return true;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
      i += 1;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

/** A string of at most `max` characters, refused at the door when it holds a NUL or a lone surrogate. */
export const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !unstorable(s), 'must not contain a NUL character or a lone surrogate');

/** The engine's limits (docs/API.md, Input limits), so a tool refuses before any work. */
export const LIMITS = {
  id: INPUT_LIMITS.idLength,
  slot: INPUT_LIMITS.slotLength,
  key: INPUT_LIMITS.keyLength,
  tool: INPUT_LIMITS.toolLength,
  free: INPUT_LIMITS.fieldLength,
  turn: INPUT_LIMITS.turnLength,
  int: INPUT_LIMITS.maxInt,
} as const;

export const idText = text(LIMITS.id);
export const freeText = text(LIMITS.free);
export const isoDate = z.iso.datetime({ offset: true });
export const positiveInt = (max: number = LIMITS.int) => z.int().min(1).max(max);

/**
 * A tool's input schema as the SDK sees it: the JSON Schema `tools/list` advertises, with a
 * validation that lets everything through, because the handler parses the arguments itself and
 * refuses bad ones as a tool error carrying INVALID_ARGUMENT (the SDK's own refusal has no code).
 */
export function advertised(schema: z.ZodType): StandardSchemaWithJSON<unknown, unknown> {
  const std = schema['~standard'];
  return {
    '~standard': {
      version: 1,
      vendor: 'memledger',
      validate: (value: unknown) => ({ value }),
      jsonSchema: std.jsonSchema,
    },
  };
}

function pathText(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
}

/** Parses a tool's arguments: INVALID_ARGUMENT naming the first field that fails, and why. */
export function parseArguments<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  const result = schema.safeParse(args ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue === undefined) throw new EngineError('INVALID_ARGUMENT', 'invalid arguments');
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const at = pathText(issue.path);
  const field = keys.length > 0 ? pathText([...issue.path, keys[0] ?? '']) : at;
  const message =
    keys.length > 0
      ? `unknown field${keys.length === 1 ? '' : 's'} ${keys.map((k) => `"${k.slice(0, 64)}"`).join(', ')}${at === '' ? '' : ` in ${at}`}`
      : `${at === '' ? 'arguments' : at}: ${issue.message}`;
  throw new EngineError('INVALID_ARGUMENT', message, { data: { field: field || 'arguments' } });
}

// What the tools answer with: entities as JSON, dates as ISO strings.

/** A receipt, as the HTTP API's OpenAPI document describes it: one schema for both faces. */
export const receiptSchema = Receipt;

export const turnSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  seq: z.int(),
  role: z.string(),
  content: z.string(),
  corrective: z.boolean(),
  receipt: receiptSchema.nullable(),
  recordedAt: z.string(),
  speaker: z.string().nullable(),
});

export const sessionSchema = z.object({
  id: z.string(),
  title: z.string().nullable(),
  turnCount: z.int(),
  createdAt: z.string(),
});

export const commitmentSchema = z.object({
  id: z.string(),
  title: z.string(),
  due: z.string().nullable(),
  status: z.string(),
  createdAt: z.string(),
  statusAt: z.string(),
});

/** An error result's structured content: the engine's code, always. */
export const toolErrorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});

/** Optional fields as the engine's input types want them: absent, never `undefined`. */
export type Compact<T> = { [K in keyof T]: Exclude<T[K], undefined> };

/** Drops the keys whose value is undefined (exactOptionalPropertyTypes). */
export function compact<T extends object>(value: T): Compact<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Compact<T>;
}
