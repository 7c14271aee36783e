import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProbeContext } from '../../src/index.js';
import type { ReadOnlySql } from '../../src/store/read-only-sql.js';

/** A fresh directory (real path) removed by the returned cleanup. */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A probe context for file instruments run without a store. */
export function fileContext(roots: string[], extra: Partial<ProbeContext> = {}): ProbeContext {
  return {
    roots,
    sourceFallback: null,
    httpAllowlist: [],
    httpTimeoutMs: 5000,
    sqlTimeoutMs: 5000,
    sql: null as unknown as ReadOnlySql,
    ...extra,
  };
}
