import { randomUUID } from 'node:crypto';
import { nodeChainCrypto } from './crypto/owner-key.js';
import { EngineError } from './domain/errors.js';
import { requireId, type Turn } from './domain/turn.js';
import {
  historyMessages,
  renderHistory,
  type RenderHistoryOptions,
} from './history/render-history.js';
import {
  sessionNotFound,
  TurnRecorder,
  type AddTurnInput,
  type AddTurnResult,
  type RecordResponseInput,
} from './history/turn-recorder.js';
import { createArrivalApi, type ArrivalApi, type ArrivalConfig } from './arrival/arrival-api.js';
import type { Embedder } from './recall/embedder.js';
import { createRecallApi, type RecallApi } from './recall/recall-api.js';
import {
  embedPending,
  requireEmbedderModel,
  type EmbedPendingOptions,
  type EmbedPendingResult,
} from './recall/vectors.js';
import { createGateApi, declareDefaultSlots, type GateApi } from './gate/gate-api.js';
import { RetractionLedger } from './ledger/retraction-ledger.js';
import type { GateConfig } from './gate/proposal-gate.js';
import { resolveProbeConfig, type ProbeConfig } from './probes/probe-config.js';
import { createProbeService, type ProbeApi } from './probes/probe-service.js';
import { DEFAULT_DB, openSqlClient } from './store/open-store.js';
import { SessionSql, type Session } from './store/session-sql.js';
import type { SqlClient } from './store/sql-client.js';
import { SubjectSql } from './store/subject-sql.js';
import { TurnSql } from './store/turn-sql.js';
import { UsageSql, type UtilityUsage } from './store/usage-sql.js';

export const DEFAULT_SUBJECT = 'owner';

export interface EngineConfig {
  /** A directory (embedded PGlite), `memory://`, or a `postgres://` URL. Default `./.memledger`. */
  db?: string;
  /** Create the store when there is none. Default true; the CLI passes false except for `init`. */
  create?: boolean;
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
   * one, recall is lexical only. Vectors are made by `embedPending`, never by recall.
   */
  embedder?: Embedder;
}

export interface HistoryOptions {
  /** Only the last N turns. */
  last?: number;
}

export interface Engine extends GateApi, ArrivalApi, RecallApi {
  readonly kind: 'pglite' | 'postgres';
  readonly location: string;
  init(options?: { subject?: string }): Promise<{ subject: string; created: boolean }>;
  readonly sessions: {
    create(options?: { subject?: string; id?: string; title?: string }): Promise<Session>;
    get(id: string | undefined): Promise<Session>;
    list(options?: { subject?: string; limit?: number }): Promise<Session[]>;
  };
  readonly turns: {
    add(input: AddTurnInput): Promise<AddTurnResult>;
    recordResponse(input: RecordResponseInput): Promise<AddTurnResult>;
  };
  readonly history: {
    turns(sessionId: string | undefined, options?: HistoryOptions): Promise<Turn[]>;
    render(
      sessionId: string | undefined,
      options?: HistoryOptions & RenderHistoryOptions,
    ): Promise<string>;
    messages(
      sessionId: string | undefined,
      options?: HistoryOptions,
    ): Promise<ReturnType<typeof historyMessages>>;
  };
  readonly usage: {
    bySession(sessionId: string | undefined): Promise<UtilityUsage[]>;
  };
  /**
   * Embeds the subject's turns and facts that have no vector for the embedder's model yet, and
   * stores the vectors (recall never writes, so it never embeds what it reads).
   */
  embedPending(options?: EmbedPendingOptions): Promise<EmbedPendingResult>;
  /** The SQL port, for hosts that read their own tables in the same store. */
  readonly sql: SqlClient;
  /** Claim probes (file, sql, http) and their dual-needle calibration. */
  readonly probes: ProbeApi;
  /** The typed retraction ledger: retract, list, due, settle. */
  readonly ledger: RetractionLedger;
  close(): Promise<void>;
}

/** An engine without autovacuum vacuums the recall index every this many turns of a subject… */
const VACUUM_EVERY = 256;
/** …and refreshes the planner's statistics every this many. */
const ANALYZE_EVERY = 2048;

/**
 * Does for the recall index what autovacuum would where there is none (PGlite): VACUUM keeps
 * its pages all-visible, so postings are read by index-only scans, and ANALYZE gives the planner
 * statistics (without them it scans every fact instead of using the terms index). Scheduled by
 * the subject's turn count, so short-lived CLI processes share the work with long-lived ones;
 * VACUUM only visits pages changed since the last one.
 */
function recallMaintenance(client: SqlClient): (turn: Turn, indexed: number) => Promise<void> {
  return async (_turn, indexed) => {
    if (indexed % ANALYZE_EVERY === 0) {
      await client.exec('VACUUM ANALYZE turn_postings, term_stats, recall_corpus, facts');
    } else if (indexed % VACUUM_EVERY === 0) {
      await client.exec('VACUUM turn_postings, term_stats, recall_corpus');
    }
  };
}

export async function createEngine(config: EngineConfig = {}): Promise<Engine> {
  const probeConfig = resolveProbeConfig(config.probes);
  if (config.embedder !== undefined) requireEmbedderModel(config.embedder);
  const client = await openSqlClient({
    db: config.db ?? DEFAULT_DB,
    create: config.create ?? true,
  });
  const clock = config.clock ?? (() => new Date());
  const newId = config.newId ?? randomUUID;
  const subjects = new SubjectSql(client);
  const sessionSql = new SessionSql(client);
  const turnSql = new TurnSql(client);
  const usageSql = new UsageSql(client);
  const recorder = new TurnRecorder({
    turns: turnSql,
    usage: usageSql,
    clock,
    newId,
    ...(client.capabilities.autovacuum ? {} : { afterInsert: recallMaintenance(client) }),
  });
  let closed = false;
  const gateApi = createGateApi({
    client,
    crypto: nodeChainCrypto,
    clock,
    newId,
    defaultSubject: DEFAULT_SUBJECT,
    ...(config.gate === undefined ? {} : { config: config.gate }),
  });

  const open = (): void => {
    if (closed) throw new EngineError('ENGINE_CLOSED', 'the engine has been closed');
  };
  const probes = createProbeService({
    client,
    config: probeConfig,
    clock,
    newId,
    assertOpen: open,
  });
  const requireSession = async (id: string | undefined): Promise<Session> => {
    open();
    const sessionId = requireId(id, 'session');
    const session = await sessionSql.get(sessionId);
    if (session === null) throw sessionNotFound(sessionId);
    return session;
  };
  const historyTurns = async (
    id: string | undefined,
    options: HistoryOptions = {},
  ): Promise<Turn[]> => {
    const session = await requireSession(id);
    if (options.last !== undefined) {
      if (!Number.isInteger(options.last) || options.last < 1) {
        throw new EngineError('INVALID_ARGUMENT', '--last must be a whole number of at least 1');
      }
      return turnSql.lastBySession(session.id, options.last);
    }
    return turnSql.listBySession(session.id);
  };

  const embedder = config.embedder;
  const recallApi = createRecallApi({
    client,
    defaultSubject: DEFAULT_SUBJECT,
    ...(embedder === undefined ? {} : { embedder }),
  });
  return {
    ...gateApi,
    recall(query, options) {
      open();
      return recallApi.recall(query, options);
    },
    embedPending(options) {
      open();
      if (embedder === undefined) {
        return Promise.reject(
          new EngineError('NO_EMBEDDER', 'no embedder is set: pass `embedder` to createEngine'),
        );
      }
      return embedPending({ client, embedder, defaultSubject: DEFAULT_SUBJECT }, options);
    },
    ...createArrivalApi({
      client,
      clock,
      newId,
      sha256Hex: nodeChainCrypto.sha256Hex,
      defaultSubject: DEFAULT_SUBJECT,
      ...(config.arrival === undefined ? {} : { config: config.arrival }),
    }),
    kind: client.kind,
    location: client.location,
    sql: client,
    probes,
    ledger: new RetractionLedger({
      client,
      probes,
      clock,
      newId,
      defaultSubject: DEFAULT_SUBJECT,
      ...(config.ledger?.dueDays === undefined ? {} : { dueDays: config.ledger.dueDays }),
    }),
    async init(options = {}) {
      open();
      const subject = requireId(options.subject ?? DEFAULT_SUBJECT, 'subject');
      const at = clock();
      const created = await subjects.ensure(subject, at);
      // A new subject starts with the default slots; an existing one keeps its declarations.
      if (created) await declareDefaultSlots(client, subject, at);
      return { subject, created };
    },
    sessions: {
      async create(options = {}) {
        open();
        const subjectId = requireId(options.subject ?? DEFAULT_SUBJECT, 'subject');
        const id = options.id === undefined ? newId() : requireId(options.id, 'session');
        const title = options.title?.trim() ?? '';
        return sessionSql.create({
          id,
          subjectId,
          title: title === '' ? null : title,
          at: clock(),
        });
      },
      get: requireSession,
      async list(options = {}) {
        open();
        const subjectId = requireId(options.subject ?? DEFAULT_SUBJECT, 'subject');
        return sessionSql.list(subjectId, options.limit ?? 100);
      },
    },
    turns: {
      add(input) {
        open();
        return recorder.add(input);
      },
      recordResponse(input) {
        open();
        return recorder.recordResponse(input);
      },
    },
    history: {
      turns: historyTurns,
      async render(id, options = {}) {
        return renderHistory(await historyTurns(id, options), options);
      },
      async messages(id, options = {}) {
        return historyMessages(await historyTurns(id, options));
      },
    },
    usage: {
      async bySession(id) {
        const session = await requireSession(id);
        return usageSql.bySession(session.id);
      },
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
}
