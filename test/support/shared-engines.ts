import { resolve } from 'node:path';
import type { LeasedEngine } from '../../cli/io.js';
import { createEngine, type Engine, type EngineConfig } from '../../src/index.js';

export interface SharedEngines {
  /** The CLI's test seam (CliIo.openEngine): one open engine per store, kept across commands. */
  open(config: EngineConfig): Promise<LeasedEngine>;
  /** The engine kept open on `db`, if a command opened one. */
  engineFor(db: string): Engine | undefined;
  /** Closes every kept engine (a PGlite directory is free for another opener again). */
  close(): Promise<void>;
}

const keyOf = (db: string): string =>
  db === 'memory://' || /^[a-z][a-z0-9+.-]*:\/\//i.test(db) ? db : resolve(db);

/**
 * What a command needs of a kept engine beyond its store. `any`: nothing (it runs no probe; only
 * the commands that run one pass a sandbox, cli/probe-options.ts probeConfig). A probe sandbox,
 * which the CLI builds from plain values (roots, hosts, timeouts): an engine opened with exactly
 * that one. null: an engine of its own (an embedder, a model, a reindex).
 */
function needsOf(config: EngineConfig): string | null {
  if (
    config.embedder !== undefined ||
    config.llm !== undefined ||
    config.reindex !== undefined ||
    config.onReindexProgress !== undefined
  ) {
    return null;
  }
  return config.probes === undefined ? 'any' : JSON.stringify(config.probes);
}

/**
 * Engines the in-process CLI keeps open between commands, as a long-running host does, instead of
 * booting the store for every command as a process must. A command that runs a probe in another
 * sandbox than the kept engine's reopens it with its own; one with an embedder, a model or a
 * reindex gets an engine of its own, opened and closed around it, after the kept one on that store
 * is closed (an embedded store has one opener). `clock` is the engines' clock, so tests that
 * compare times need not wait on the wall. Each command's anchor (its key file) is the one a kept
 * engine checks reads against while that command runs.
 */
export function sharedEngines(options: { clock?: () => Date } = {}): SharedEngines {
  const kept = new Map<string, { engine: Engine; sandbox: string }>();
  // a kept engine serves many commands, each with its own anchor (--key, the environment): the
  // engine asks the one of the command that opened it last
  let anchor: EngineConfig['anchor'];
  const withClock = (config: EngineConfig): EngineConfig => ({
    ...config,
    // in process, as a long-running program that owns its store (the CLI's own processes share
    // theirs through a host: test/heavy/shared-store.test.ts)
    shared: false,
    anchor: (subject) => anchor?.(subject) ?? null,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  async function drop(key: string): Promise<void> {
    const entry = kept.get(key);
    kept.delete(key);
    await entry?.engine.close();
  }
  return {
    async open(config) {
      const db = config.db ?? './.memledger';
      if (db === 'memory://') throw new Error('a memory:// store does not outlive its command');
      const key = keyOf(db);
      const needs = needsOf(config);
      anchor = config.anchor;
      const entry = kept.get(key);
      if (entry !== undefined && (needs === 'any' || needs === entry.sandbox)) {
        return { engine: entry.engine, release: async () => undefined };
      }
      await drop(key);
      const engine = await createEngine(withClock(config));
      if (needs === null) return { engine, release: () => engine.close() };
      kept.set(key, { engine, sandbox: needs });
      return { engine, release: async () => undefined };
    },
    engineFor: (db) => kept.get(keyOf(db))?.engine,
    async close() {
      for (const key of [...kept.keys()]) await drop(key);
    },
  };
}
