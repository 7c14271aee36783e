import { randomUUID } from 'node:crypto';
import type { ArrivalConfig } from './arrival/arrival-module.js';
import { DEFAULT_SUBJECT } from './domain/defaults.js';
import { EngineError } from './domain/errors.js';
import { requireId } from './domain/turn.js';
import { createEngineContext } from './engine/context.js';
import { nodeChainCrypto } from './crypto/chain-crypto.js';
import { createTrust } from './trust/trust.js';
import type { Engine } from './engine/handle-types.js';
import { createModules } from './engine/modules.js';
import { createSubjectHandle } from './engine/subject-handle.js';
import { registerStoreClient } from './engine/test-access.js';
import { declareDefaultSlots } from './gate/gate-module.js';
import type { GateConfig } from './gate/proposal-gate.js';
import {
  resolveProbeConfig,
  type ProbeConfig,
  type ResolvedProbeConfig,
} from './probes/probe-config.js';
import type { Embedder } from './recall/embedder.js';
import { requireEmbedderModel } from './recall/vectors.js';
import { DEFAULT_DB, openSqlClient } from './store/open-store.js';
import { checkRecallIndex, reindexRecall, reindexRequired } from './store/recall-reindex.js';
import type { SqlClient } from './store/sql-client.js';
import { SubjectSql } from './store/subject-sql.js';
import type { LlmClient } from './reflection/llm-client.js';
import type { OwnerAnchor } from './domain/anchor.js';
import { backupStore, restoreStore, type RestoreSummary } from './transfer/backup-store.js';
import { exportSubject } from './transfer/export-subject.js';
import type { TransferProgress } from './transfer/jsonl-folder.js';
import { importSubject } from './transfer/import-subject.js';

/** The subject a handle acts on when `engine.subject()` is given none. */
export { DEFAULT_SUBJECT };

export interface EngineConfig {
  /** A directory (embedded PGlite), `memory://`, or a `postgres://` URL. Default `./.memledger`. */
  db?: string;
  /** Create the store when there is none. Default true. */
  create?: boolean;
  /**
   * Reach an embedded directory store through its host, which every memledger process on that
   * store shares (the CLI, hooks, `mcp`, `serve`, other programs that ask for it): the host is
   * started when none runs and stops after `idleSeconds` (default 300) with no client. Without
   * it the engine opens the store in this process and holds it alone. Ignored for `memory://`
   * and PostgreSQL. See docs/API.md, "One store, many processes".
   *
   * `hostViews: true`: reads ask the host for each subject's trust view, which it keeps between
   * processes, so a process that reads a few times and exits (a command, a hook) does not verify
   * the whole chain first. Without it (the default, for a program that runs long) the engine
   * keeps its own verifier: its first read verifies the chain, later reads cost no trip.
   */
  shared?: boolean | { idleSeconds?: number; hostViews?: boolean };
  /** The engine's clock; every recorded time comes from it. */
  clock?: () => Date;
  /** Id generator for sessions, turns, facts and log rows. */
  newId?: () => string;
  /** The gate's cue lists (correction cues, failure-to-recall cues); defaults are documented. */
  gate?: Partial<GateConfig>;
  /** Probe roots, build fallback, http allowlist and timeouts, extra instruments. */
  probes?: ProbeConfig;
  /** Days after a correction that its falsifier matures (default 3). */
  ledger?: { dueDays?: number };
  /** The host's identity text, host blocks, default time zone, block timeout. */
  arrival?: ArrivalConfig;
  /**
   * Turns text into vectors for recall (`openAiEmbedder`, `localEmbedder`, or your own). Without
   * one, recall is lexical only. Vectors are made by `vectors.embedPending`, never by recall.
   */
  embedder?: Embedder;
  /**
   * The model memledger's own reflection and summaries call (`createLlmClient`, or any object
   * with its shape). Without one they are LLM_NOT_CONFIGURED; nothing else needs a model.
   */
  llm?: LlmClient;
  /**
   * A store whose recall index was built by another analyzer version is refused with
   * REINDEX_REQUIRED; with `reindex: true` it is rebuilt while opening instead.
   */
  reindex?: boolean;
  /**
   * The owner's key (and the heads the owner signed) for a subject, from outside the store: every
   * read checks the store against it, so a store whose key was replaced shows nothing it signed.
   * `keyFileAnchor(path)` reads one from an owner key file; return null for a subject with none.
   * Without an anchor, reads trust the store's own copy of the key, and say so (docs/TRUST.md).
   */
  anchor?: (subjectId: string) => OwnerAnchor | null;
  /** Progress of a rebuild asked for by `reindex`. */
  onReindexProgress?: (progress: { done: number; total: number }) => void;
}

/** Opens (and by default creates) a store and builds the engine over it. Composition only. */
export async function createEngine(config: EngineConfig = {}): Promise<Engine> {
  const probes = checkConfig(config);
  const client = await openSqlClient({
    db: config.db ?? DEFAULT_DB,
    create: config.create ?? true,
    shared: sharedOption(config.shared),
  });
  return assemble(client, config, probes);
}

/**
 * The engine over a store client that is open already, as a new process would build it over that
 * store (nothing from an earlier engine kept). Not exported by the package: tests reopen one
 * embedded store this way without booting it again. The engine closes the client when it closes.
 */
export async function engineOver(
  client: SqlClient,
  config: Omit<EngineConfig, 'db' | 'create' | 'shared'> = {},
): Promise<Engine> {
  return assemble(client, config, checkConfig(config));
}

function sharedOption(shared: EngineConfig['shared']): { idleMs?: number } | undefined {
  if (shared === undefined || shared === false) return undefined;
  if (shared === true || shared.idleSeconds === undefined) return {};
  const seconds = shared.idleSeconds;
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `shared.idleSeconds must be a number of seconds above 0 and at most 86400, not ${seconds}`,
    );
  }
  return { idleMs: Math.round(seconds * 1000) };
}

/** What a config is refused for before any store is touched; its probe settings, resolved. */
function checkConfig(config: EngineConfig): ResolvedProbeConfig {
  const probes = resolveProbeConfig(config.probes);
  if (config.embedder !== undefined) requireEmbedderModel(config.embedder);
  return probes;
}

async function assemble(
  client: SqlClient,
  config: EngineConfig,
  probes: ResolvedProbeConfig,
): Promise<Engine> {
  let reindexed: { turns: number; facts: number } | null = null;
  let storeId: string;
  try {
    storeId = await new SubjectSql(client).storeId(
      randomUUID(),
      (config.clock ?? (() => new Date()))(),
    );
    const index = await checkRecallIndex(client);
    if (!index.current) {
      if (config.reindex !== true) throw reindexRequired(index);
      // ifStale: a process that opened alongside may have rebuilt it while this one waited.
      reindexed = await reindexRecall(client, {
        ifStale: true,
        ...(config.onReindexProgress === undefined ? {} : { onProgress: config.onReindexProgress }),
      });
    }
  } catch (err) {
    await client.close();
    throw err;
  }
  const ctx = createEngineContext({
    client,
    clock: config.clock ?? (() => new Date()),
    newId: config.newId ?? randomUUID,
    storeId,
  });
  const modules = createModules(ctx, {
    probes,
    ...(config.gate === undefined ? {} : { gate: config.gate }),
    ...(config.ledger?.dueDays === undefined ? {} : { dueDays: config.ledger.dueDays }),
    ...(config.arrival === undefined ? {} : { arrival: config.arrival }),
    ...(config.embedder === undefined ? {} : { embedder: config.embedder }),
    ...(config.llm === undefined ? {} : { llm: config.llm }),
    ...(config.anchor === undefined ? {} : { anchor: config.anchor }),
    hostViews: typeof config.shared === 'object' && config.shared.hostViews === true,
  });
  const subjects = new SubjectSql(client);

  const engine: Engine = {
    kind: client.kind,
    location: client.location,
    storeId,
    reindexed,
    subject: (id = DEFAULT_SUBJECT) => createSubjectHandle(ctx, modules, id),
    subjects: {
      async create(raw = DEFAULT_SUBJECT) {
        ctx.assertOpen();
        const id = requireId(raw, 'subject');
        const at = ctx.clock();
        // A new subject starts with the default slots; an existing one keeps its declarations.
        const created = await client.transaction(async (tx) => {
          const isNew = await new SubjectSql(tx).ensure(id, at);
          if (isNew) await declareDefaultSlots(tx, id, at);
          return isNew;
        });
        return { id, created };
      },
      async list() {
        ctx.assertOpen();
        return subjects.list();
      },
      async export(raw, out, options = {}) {
        const id = await ctx.requireSubject(raw);
        if (typeof out !== 'string' || out.length === 0) {
          throw new EngineError('INVALID_ARGUMENT', 'out must name a folder to write', {
            data: { field: 'out' },
          });
        }
        return exportSubject(client, id, out, options);
      },
      async import(path, options = {}) {
        ctx.assertOpen();
        if (typeof path !== 'string' || path.length === 0) {
          throw new EngineError('INVALID_ARGUMENT', 'path must name an export folder', {
            data: { field: 'path' },
          });
        }
        if (options.subject !== undefined) requireId(options.subject, 'subject');
        return importSubject(
          {
            client,
            crypto: modules.crypto,
            anchor: (subjectId) => modules.trust.anchor(subjectId),
            auditWithin: (db, subjectId) => modules.trust.auditWithin(db, subjectId),
          },
          path,
          options,
        );
      },
    },
    tokens: { authenticate: (secret) => modules.tokens.authenticate(secret) },
    async backup(out, options = {}) {
      ctx.assertOpen();
      if (typeof out !== 'string' || out.length === 0) {
        throw new EngineError('INVALID_ARGUMENT', 'out must name a folder to write', {
          data: { field: 'out' },
        });
      }
      return backupStore(client, out, options);
    },
    addArrivalBlock(def) {
      ctx.assertOpen();
      modules.arrival.addBlock(def);
    },
    async close() {
      if (ctx.closed) return;
      ctx.markClosed();
      await client.close();
    },
  };
  registerStoreClient(engine, client);
  return engine;
}

/**
 * Restores a backup (`engine.backup`) into a new store at `db` (made when missing; a store that was
 * used is refused with STORE_NOT_EMPTY), with the backed-up store's identity. Every file is checked
 * against the backup's digests before anything is written; one transaction. The store is closed
 * after: open it with `createEngine`, and check each subject with `owner.verifyChain()`.
 */
export async function restoreBackup(input: {
  from: string;
  db: string;
  /** The owner's anchor per subject (`keyFileAnchor`): each chain is checked against it. */
  anchor?: (subjectId: string) => OwnerAnchor | null;
  onProgress?: (p: TransferProgress) => void;
}): Promise<RestoreSummary> {
  if (typeof input.from !== 'string' || input.from.length === 0) {
    throw new EngineError('INVALID_ARGUMENT', 'from must name a backup folder', {
      data: { field: 'from' },
    });
  }
  const client = await openSqlClient({ db: input.db, create: true });
  try {
    const clock = (): Date => new Date();
    // every subject's chain checked as `chain verify` would, before the restore commits
    const audit = (storeId: string) =>
      createTrust({
        client,
        crypto: nodeChainCrypto,
        clock,
        storeId,
        ...(input.anchor === undefined ? {} : { anchor: input.anchor }),
      }).auditWithin;
    return await restoreStore(client, input.from, {
      audit,
      ...(input.onProgress === undefined ? {} : { onProgress: input.onProgress }),
    });
  } finally {
    await client.close();
  }
}
