import { z } from '@hono/zod-openapi';
import { COMPARE_OPS, FILE_PROBE_MODES, PROBE_VERDICTS } from '../../src/index.js';
import { LIMITS, text } from './schemas.js';

/**
 * Probe specs as the HTTP API takes them (strict: the engine's own parser refuses stray fields
 * too, and checks what a schema cannot: paths inside the roots, one read-only statement, allowed
 * hosts) and as probe records give them back.
 */
const fields = {
  file: {
    kind: z.literal('file'),
    path: text(LIMITS.tool).min(1),
    mode: z.enum(FILE_PROBE_MODES),
    needle: text().min(1).optional(),
    negate: z.boolean().optional(),
  },
  sql: {
    kind: z.literal('sql'),
    query: text().min(1),
    op: z.enum(COMPARE_OPS),
    expect: z.number(),
  },
  http: {
    kind: z.literal('http'),
    url: text(LIMITS.tool).min(1),
    status: z.number().int().min(100).max(599).optional(),
    contains: text().min(1).optional(),
  },
};

export const ProbeSpecIn = z
  .discriminatedUnion('kind', [
    z.strictObject(fields.file),
    z.strictObject(fields.sql),
    z.strictObject(fields.http),
  ])
  .openapi('ProbeSpecInput');

export const ProbeSpecOut = z
  .discriminatedUnion('kind', [
    z.object({ ...fields.file, path: z.string(), needle: z.string().optional() }),
    z.object({ ...fields.sql, query: z.string() }),
    z.object({ ...fields.http, url: z.string(), contains: z.string().optional() }),
  ])
  .openapi('ProbeSpec');

/** A retraction's machine probe: the spec and the verdict that decides each side. */
export const RetractionProbeIn = z.strictObject({
  spec: ProbeSpecIn,
  standsIf: z.enum(PROBE_VERDICTS),
  overturnsIf: z.enum(PROBE_VERDICTS),
});
