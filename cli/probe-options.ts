import { delimiter } from 'node:path';
import type { ProbeConfig } from '../src/index.js';
import type { CommandContext } from './context.js';
import type { OptionSpecs } from './options.js';

/** Options any command that runs probes takes (`probe …`, `retract settle --run-probe`). */
export const PROBE_CONFIG_OPTIONS = {
  root: {
    kind: 'repeat',
    value: 'DIR',
    help: 'a directory file probes may read (repeatable; else $MEMLEDGER_PROBE_ROOTS, else .)',
  },
  allow: {
    kind: 'list',
    value: 'host,...',
    help: 'hosts http probes (and serve --notify-url) may reach besides loopback (else $MEMLEDGER_PROBE_HTTP_ALLOW)',
  },
  'timeout-ms': { kind: 'int', value: 'N', min: 1, help: 'the http and sql probe timeout' },
} as const satisfies OptionSpecs;

/**
 * Roots: `--root` (repeatable), else MEMLEDGER_PROBE_ROOTS (path-delimiter separated), else the
 * current directory (`defaultRoots: 'none'`, for the servers: no directory, so a token holder
 * reads no file the owner did not name). HTTP allowlist: `--allow a,b`, else MEMLEDGER_PROBE_HTTP_ALLOW (comma list).
 */
export function probeConfig(
  ctx: CommandContext<typeof PROBE_CONFIG_OPTIONS>,
  defaultRoots: 'cwd' | 'none' = 'cwd',
): ProbeConfig {
  const given = ctx.values.root ?? [];
  const fromEnv = (ctx.io.env.MEMLEDGER_PROBE_ROOTS ?? '').split(delimiter).filter((r) => r !== '');
  const roots = given.length > 0 ? [...given] : fromEnv;
  const allow =
    ctx.values.allow ??
    (ctx.io.env.MEMLEDGER_PROBE_HTTP_ALLOW ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter((h) => h !== '');
  const timeout = ctx.values['timeout-ms'];
  return {
    ...(roots.length > 0 ? { roots } : defaultRoots === 'none' ? { roots: [] } : {}),
    httpAllowlist: [...allow],
    ...(timeout === undefined ? {} : { httpTimeoutMs: timeout, sqlTimeoutMs: timeout }),
  };
}
