import { z } from '@hono/zod-openapi';
import { ERROR_CODES, INPUT_LIMITS } from '../../src/index.js';

/**
 * The building blocks of every HTTP input and output schema. Inputs are strict (an unknown field
 * is refused) and bounded by the engine's own input limits (docs/API.md, Input limits), so the
 * face refuses what the engine would refuse before anything is read or written.
 */
export const LIMITS = {
  /** A free-text field: a claim, a title, a purpose, a quote. */
  field: INPUT_LIMITS.fieldLength,
  /** A turn's text. */
  content: INPUT_LIMITS.turnLength,
  /** A tool name, a source, a surface. */
  tool: INPUT_LIMITS.toolLength,
  slot: INPUT_LIMITS.slotLength,
  key: INPUT_LIMITS.keyLength,
  /** Items of a list argument (tags, tools, sources). */
  listItems: INPUT_LIMITS.listItems,
  /** A PostgreSQL integer. */
  maxInt: INPUT_LIMITS.maxInt,
  // The face's own bounds, on what it reads before the engine does:
  /** Proposals in one batch. */
  proposals: 1_000,
  /** Content blocks in one response. */
  blocks: 10_000,
  /** Items in one page. */
  pageItems: 200,
  /** How far an offset may reach. */
  offset: 1_000_000,
} as const;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A string the store can keep as sent: at most `max` code units, no NUL, no lone surrogate. */
export function text(max: number = LIMITS.field) {
  return z
    .string()
    .max(max)
    .refine((s) => !s.includes('\u0000'), { message: 'must not contain a NUL character' })
    .refine((s) => !LONE_SURROGATE.test(s), {
      message: 'must not contain a lone surrogate (not valid Unicode)',
    });
}

/** An id as the engine writes them (session ids a host names follow the same rule). */
export const Id = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/, {
    message: 'must be 1-128 letters, digits, and _ . : @ - (starting with a letter or digit)',
  })
  .openapi({ example: '2b1f8f3e-6c1d-4f55-9d0a-2f4f1c0f9a11' });

/** A path parameter holding one id. */
export function idParam<N extends string>(name: N) {
  const shape = { [name]: Id.openapi({ param: { name, in: 'path' } }) } as Record<N, typeof Id>;
  return z.strictObject(shape);
}

/** A date and time in ISO 8601 with an offset (inputs) or in UTC (outputs). */
export const DateTimeIn = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .openapi({ type: 'string', format: 'date-time' });
export const DateTime = z.iso.datetime();

/** A whole number in a query string: digits only, within [min, max]. */
export function intQuery(min: number, max: number) {
  return z
    .string()
    .regex(/^(0|[1-9][0-9]{0,9})$/, { message: 'must be a whole number' })
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .openapi({ type: 'integer', minimum: min, maximum: max });
}

/** true or false in a query string. */
export const boolQuery = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .openapi({ type: 'boolean' });

/** limit and offset, for every list that grows. */
export const pageQuery = {
  limit: intQuery(1, LIMITS.pageItems)
    .optional()
    .openapi({ description: `items per page (1-${LIMITS.pageItems}, default 50)` }),
  offset: intQuery(0, LIMITS.offset).optional().openapi({
    description: 'items to skip (default 0); take `page.nextOffset` for the next page',
  }),
};

export const PageInfo = z
  .object({
    limit: z.number().int(),
    offset: z.number().int(),
    /** The offset of the next page; null on the last. */
    nextOffset: z.number().int().nullable(),
    /**
     * Always false: every list is paged to its end (the store pages what it lists in full). Kept
     * so that a client reading it stays right.
     */
    truncated: z.boolean(),
  })
  .openapi('PageInfo');

/** The body every failure answers with. */
export const ErrorBody = z
  .object({
    error: z.object({
      code: z.enum([...ERROR_CODES]),
      message: z.string(),
    }),
  })
  .openapi('Error');

/** A body that carries nothing (an action on a resource): `{}` or no body at all. */
export const EmptyBody = z.strictObject({});

/**
 * What is wrong with a JSON value the engine passes on (response blocks): nesting deeper than
 * `depth`, or a string or key holding a NUL or a lone surrogate; null when nothing is. Iterative,
 * so any depth the body limit lets through is walked without recursion.
 */
export function jsonValueProblem(root: unknown, depth = 64): string | null {
  const stack: Array<{ value: unknown; level: number }> = [{ value: root, level: 0 }];
  while (stack.length > 0) {
    const { value, level } = stack.pop() as { value: unknown; level: number };
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return 'holds a NUL character';
      if (LONE_SURROGATE.test(value)) return 'holds a lone surrogate (not valid Unicode)';
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (level >= depth) return `nests deeper than ${depth} levels`;
    const entries = Array.isArray(value) ? value : Object.entries(value).flat();
    for (const child of entries as unknown[]) stack.push({ value: child, level: level + 1 });
  }
  return null;
}

/** A surface's name (chat, wake, …), as the engine accepts them. */
export const Surface = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,63}$/, { message: 'must be a-z, 0-9, _ and - (e.g. chat, wake)' })
  .openapi({ example: 'chat' });

/** An instrument's name (file, sql, http, or a host's own). */
export const InstrumentName = text(128).min(1);
