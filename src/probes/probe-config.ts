import { resolve } from 'node:path';
import { EngineError } from '../domain/errors.js';
import { PROBE_KINDS } from '../domain/probe.js';
import { createFileInstrument } from './file-probe.js';
import { bareHost } from './host-policy.js';
import { createHttpInstrument } from './http-probe.js';
import type { ProbeContext, ProbeInstrument, SourceFallback } from './instruments.js';
import { createSqlInstrument } from './sql-probe.js';

export interface ProbeConfig {
  /**
   * Allowed roots for file probes. Default: the current directory. `[]`: none, so every file
   * probe answers that its path is outside the allowed roots (the servers' default).
   */
  roots?: string[];
  /** e.g. `{ from: 'src/', to: 'dist/', fromExt: '.ts', toExt: '.js' }`. Default none. */
  sourceFallback?: SourceFallback | null;
  /** Hostnames an http probe may reach besides loopback (exact names). Default none. */
  httpAllowlist?: string[];
  /** Deadline for a whole http exchange. Default 5000. */
  httpTimeoutMs?: number;
  /** statement_timeout for an sql probe. Default 5000. */
  sqlTimeoutMs?: number;
  /** Extra instruments; one named like a built-in (`file`, `sql`, `http`) replaces it. */
  instruments?: ProbeInstrument[];
}

export interface ResolvedProbeConfig {
  settings: Omit<ProbeContext, 'sql'>;
  /** By name: the built-ins first, then the extras, in order. */
  instruments: ReadonlyMap<string, ProbeInstrument>;
}

const NAME_PATTERN = /^[a-z][a-z0-9_.:-]{0,63}$/i;

function bad(message: string): EngineError {
  return new EngineError('INVALID_ARGUMENT', `probe config: ${message}`);
}

function strings(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === '')) {
    throw bad(`${what} must be a list of non-empty strings`);
  }
  return value as string[];
}

function millis(value: unknown, what: string): number {
  if (value === undefined) return 5000;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 600_000) {
    throw bad(`${what} must be a whole number of milliseconds from 1 to 600000`);
  }
  return value;
}

function fallback(value: ProbeConfig['sourceFallback']): SourceFallback | null {
  if (value === undefined || value === null) return null;
  const { from, to, fromExt, toExt } = value;
  if (![from, to, fromExt, toExt].every((v) => typeof v === 'string') || from === '') {
    throw bad('sourceFallback needs from (non-empty), to, fromExt and toExt as strings');
  }
  if ([from, to].some((v) => v.split(/[\\/]/).includes('..'))) {
    throw bad('sourceFallback must not climb with ".."');
  }
  return { from, to, fromExt, toExt };
}

function checkInstrument(i: ProbeInstrument): ProbeInstrument {
  if (typeof i !== 'object' || i === null || !NAME_PATTERN.test(String(i.name))) {
    throw bad('an instrument needs a name of letters, digits and _ . : - (at most 64)');
  }
  if (!(PROBE_KINDS as readonly unknown[]).includes(i.kind)) {
    throw bad(`instrument "${i.name}" has an unknown kind`);
  }
  if (typeof i.run !== 'function' || typeof i.controls !== 'function') {
    throw bad(`instrument "${i.name}" needs run() and controls()`);
  }
  if ((PROBE_KINDS as readonly string[]).includes(i.name) && i.name !== i.kind) {
    throw bad(
      `instrument "${i.name}" replaces the built-in ${i.name} instrument, so its kind must be ${i.name}`,
    );
  }
  return i;
}

/** Checks the probe configuration before the engine opens anything. */
export function resolveProbeConfig(config: ProbeConfig = {}): ResolvedProbeConfig {
  const roots = strings(config.roots ?? [process.cwd()], 'roots');
  const instruments = new Map<string, ProbeInstrument>(
    [createFileInstrument(), createSqlInstrument(), createHttpInstrument()].map((i) => [i.name, i]),
  );
  const extras = (config.instruments ?? []).map(checkInstrument);
  const names = extras.map((i) => i.name);
  const twice = names.find((n, k) => names.indexOf(n) !== k);
  if (twice !== undefined) throw bad(`two instruments are named "${twice}"`);
  for (const i of extras) instruments.set(i.name, i);
  return {
    settings: {
      roots: roots.map((r) => resolve(r)),
      sourceFallback: fallback(config.sourceFallback),
      httpAllowlist: strings(config.httpAllowlist ?? [], 'httpAllowlist').map(bareHost),
      httpTimeoutMs: millis(config.httpTimeoutMs, 'httpTimeoutMs'),
      sqlTimeoutMs: millis(config.sqlTimeoutMs, 'sqlTimeoutMs'),
    },
    instruments,
  };
}
