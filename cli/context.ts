import { createEngine, DEFAULT_DB, type Engine, type EngineConfig } from '../src/index.js';
import type { CliIo } from './io.js';

export interface CommandContext {
  io: CliIo;
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  json: boolean;
  /** The `--db` value, then MEMLEDGER_DB, then ./.memledger. */
  db: string;
  /** Opens the engine; only `init` and `demo` may create a store. `extra`: probes, embedder. */
  withEngine<T>(
    create: boolean,
    fn: (engine: Engine) => Promise<T>,
    extra?: Pick<EngineConfig, 'probes' | 'embedder'>,
  ): Promise<T>;
  /** Prints one JSON document with --json, the text otherwise. */
  print(json: unknown, text: () => string): void;
  /** A command whose check failed (not an error) sets a non-zero exit code. */
  setExitCode(code: number): void;
  readonly exitCode: number;
}

export function makeContext(
  io: CliIo,
  values: CommandContext['values'],
  positionals: string[],
): CommandContext {
  const json = values.json === true;
  const db =
    (typeof values.db === 'string' ? values.db : undefined) ?? io.env.MEMLEDGER_DB ?? DEFAULT_DB;
  let exitCode = 0;
  return {
    io,
    get exitCode() {
      return exitCode;
    },
    setExitCode(code) {
      exitCode = code;
    },
    values,
    positionals,
    json,
    db,
    async withEngine(create, fn, extra = {}) {
      const engine = await createEngine({ ...extra, db, create });
      try {
        return await fn(engine);
      } finally {
        await engine.close();
      }
    },
    print(doc, text) {
      io.stdout(json ? JSON.stringify(doc) + '\n' : text() + '\n');
    },
  };
}
