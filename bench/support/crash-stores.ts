import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { PG_URL, withPgClient, type BenchKind } from '../../eval/bench-store.js';
import { createEngine, type Engine } from '../../src/index.js';

/** Where one crash-bench store lives: a directory of its own, or a PostgreSQL schema of its own. */
export interface StoreLocation {
  kind: BenchKind;
  /** The `--db` value. */
  db: string;
  /** What to show in a report (the directory, or the schema). */
  label: string;
  /** Removes the directory or drops the schema; a failure is printed, never thrown. */
  cleanup(): Promise<void>;
}

/** A new, not yet created, store location under `root` (PGlite) or in a new schema. */
export function newLocation(kind: BenchKind, root: string, name: string): StoreLocation {
  if (kind === 'pglite') {
    const dir = join(root, name);
    return {
      kind,
      db: dir,
      label: dir,
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `ml_crash_${process.pid}_${randomBytes(3).toString('hex')}_${name.replace(/[^a-z0-9]/g, '_')}`;
  return {
    kind,
    db: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`,
    label: `schema ${schema}`,
    cleanup: () =>
      withPgClient((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(
        () => undefined,
        (err: Error) => console.error(`crash-bench: could not drop ${schema}: ${err.message}`),
      ),
  };
}

/** Creates the store with the default subject and its owner public key, as `init` leaves it. */
export async function createStore(
  loc: StoreLocation,
  ownerKey: { keyId: string; publicKeyPem: string },
): Promise<void> {
  const engine = await createEngine({ db: loc.db, create: true });
  try {
    await engine.subjects.create();
    await engine.subject().owner.setKey(ownerKey);
  } finally {
    await engine.close();
  }
}

/**
 * The store opened again after a crash, as any later process would (never created), and `fn`
 * run on it; a store that does not open, or fails under `fn`, is `ok: false` with the error.
 */
export async function reopen<T>(
  loc: StoreLocation,
  fn: (engine: Engine) => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
  let engine: Engine;
  try {
    engine = await createEngine({ db: loc.db, create: false });
  } catch (err) {
    return { ok: false, error: describe(err) };
  }
  try {
    return { ok: true, value: await fn(engine) };
  } catch (err) {
    // It opened, but reading it back failed: that store is not usable either.
    return { ok: false, error: `opened, then: ${describe(err)}` };
  } finally {
    await engine.close().catch(() => undefined);
  }
}

/** `CODE: message` for an EngineError, the message otherwise. */
export function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
