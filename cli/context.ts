import type { Engine, EngineConfig, SubjectHandle } from '../src/index.js';
import { DEFAULT_DB } from '../src/domain/defaults.js';
import { EngineError } from '../src/domain/errors.js';
import type { CliIo, LeasedEngine } from './io.js';
import { cliAnchor } from './anchor.js';
import type { OptionSpecs, OptionValues } from './options.js';
import type { GlobalValues } from './parse-options.js';

/** What a command may add to the engine it opens: probes, an embedder, a model, reindexing. */
export type EngineExtras = Pick<
  EngineConfig,
  'probes' | 'embedder' | 'llm' | 'reindex' | 'onReindexProgress' | 'anchor'
> & {
  /**
   * The command serves many reads (`serve`, `mcp`): it keeps its own trust verifier. Every other
   * command reads a few times and exits, and asks the store's host for trust views instead.
   */
  longLived?: boolean;
};

/** Everything a command's `run` is given; `values` holds exactly its declared options. */
export interface CommandContext<O extends OptionSpecs = OptionSpecs> {
  readonly io: CliIo;
  readonly values: OptionValues<O>;
  readonly positionals: readonly string[];
  readonly json: boolean;
  /** The `--db` value, then MEMLEDGER_DB, then ./.memledger. */
  readonly db: string;
  /** Opens the engine; only `init` and `demo` may create a store. */
  withEngine<T>(
    create: boolean,
    fn: (engine: Engine) => Promise<T>,
    extra?: EngineExtras,
  ): Promise<T>;
  /** Opens the existing store and hands `fn` the subject's handle (no id: `owner`). */
  withSubject<T>(
    subject: string | undefined,
    fn: (me: SubjectHandle) => Promise<T>,
    extra?: EngineExtras,
  ): Promise<T>;
  /** Prints one JSON document with --json, the text otherwise. */
  print(json: unknown, text: () => string): void;
  /** A command whose check failed (not an error) sets a non-zero exit code. */
  setExitCode(code: number): void;
  readonly exitCode: number;
}

/**
 * A process's engine: opened for the command, closed after it. The engine is loaded here, when a
 * command first opens it: `--help`, a usage error or a command that opens no store loads none.
 */
async function openForCommand(config: EngineConfig): Promise<LeasedEngine> {
  const { createEngine } = await import('../src/index.js');
  const engine = await createEngine(config);
  return { engine, release: () => engine.close() };
}

/** How long a store host this command starts waits for a client (MEMLEDGER_HOST_IDLE_SECONDS). */
function hostIdle(io: CliIo): { idleSeconds?: number } {
  const raw = io.env.MEMLEDGER_HOST_IDLE_SECONDS;
  if (raw === undefined || raw.trim() === '') return {};
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `MEMLEDGER_HOST_IDLE_SECONDS must be a number of seconds above 0 and at most 86400, not "${raw.slice(0, 40)}"`,
      { data: { field: 'MEMLEDGER_HOST_IDLE_SECONDS' } },
    );
  }
  return { idleSeconds: seconds };
}

/** The context of one run of one command. */
export function makeContext<O extends OptionSpecs>(
  io: CliIo,
  values: OptionValues<O>,
  globals: GlobalValues,
  positionals: readonly string[],
): CommandContext<O> {
  const { json } = globals;
  const db = globals.db ?? io.env.MEMLEDGER_DB ?? DEFAULT_DB;
  let exitCode = 0;
  const withEngine = async <T>(
    create: boolean,
    fn: (engine: Engine) => Promise<T>,
    { longLived, ...extra }: EngineExtras = {},
  ): Promise<T> => {
    // every read checks the store against the owner's key file (docs/TRUST.md, "The anchor");
    // a command may name its own (the demo anchors its subject with the key it makes)
    // an embedded store is shared through its host with every other memledger process
    const config = {
      anchor: cliAnchor({ io, values }),
      ...extra,
      db,
      create,
      shared: { ...hostIdle(io), hostViews: longLived !== true },
    };
    const leased = await (io.openEngine ?? openForCommand)(config);
    try {
      return await fn(leased.engine);
    } finally {
      await leased.release();
    }
  };
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
    withEngine,
    withSubject: (subject, fn, extra) =>
      withEngine(false, (engine) => fn(engine.subject(subject)), extra),
    print(doc, text) {
      io.stdout(json ? JSON.stringify(doc) + '\n' : text() + '\n');
    },
  };
}
