import { delimiter } from 'node:path';
import type { ProbeConfig } from '../src/index.js';
import { intValue, listValue } from './args.js';
import type { CommandContext } from './context.js';

/** Options any command that runs probes takes (`probe …`, `retract settle --run-probe`). */
export const PROBE_CONFIG_OPTIONS = {
  root: { type: 'string', multiple: true },
  allow: { type: 'string' },
  'timeout-ms': { type: 'string' },
} as const;

/**
 * Roots: `--root` (repeatable), else MEMLEDGER_PROBE_ROOTS (path-delimiter separated), else the
 * current directory. HTTP allowlist: `--allow a,b`, else MEMLEDGER_PROBE_HTTP_ALLOW (comma list).
 */
export function probeConfig(ctx: CommandContext): ProbeConfig {
  const given = ctx.values.root;
  const fromEnv = (ctx.io.env.MEMLEDGER_PROBE_ROOTS ?? '').split(delimiter).filter((r) => r !== '');
  const roots = Array.isArray(given) && given.length > 0 ? given : fromEnv;
  const allow =
    listValue(ctx.values, 'allow') ??
    (ctx.io.env.MEMLEDGER_PROBE_HTTP_ALLOW ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter((h) => h !== '');
  const timeout = intValue(ctx.values, 'timeout-ms', 1);
  return {
    ...(roots.length > 0 ? { roots } : {}),
    httpAllowlist: allow,
    ...(timeout === undefined ? {} : { httpTimeoutMs: timeout, sqlTimeoutMs: timeout }),
  };
}
