import type { OwnerTokensApi, TokensApi } from '../access/access-tokens.js';
import type { HostBlockDef } from '../arrival/host-blocks.js';
import type { SessionsApi, TurnsApi, HistoryApi } from '../history/history-types.js';
import type { GateApi, OwnerApi, SlotsApi, FactsApi } from '../gate/gate-types.js';
import type { LedgerApi } from '../ledger/ledger-types.js';
import type { ProbesApi } from '../probes/probe-types.js';
import type { ArrivalApi, ToolsApi, CommitmentsApi, ActionsApi } from '../arrival/arrival-types.js';
import type { RecallApi, VectorsApi } from '../recall/recall-types.js';
import type { ReflectionApi } from '../reflection/reflection-types.js';
import type { SummariesApi } from '../reflection/summary-types.js';
import type { OwnerRememberApi } from './remember.js';
import type { ExportOptions, ExportSummary } from '../transfer/export-subject.js';
import type { ImportOptions, ImportSummary } from '../transfer/import-subject.js';
import type { BackupSummary } from '../transfer/backup-store.js';
import type { TransferProgress } from '../transfer/jsonl-folder.js';

/**
 * Everything about one subject (the person the agent serves). No method takes a subject: a
 * handle cannot read or write another subject's memory. Making a handle is free; every method
 * rejects with SUBJECT_NOT_FOUND until the subject is created (`engine.subjects.create`).
 */
export interface SubjectHandle {
  readonly id: string;
  /** The store's identity (`Engine.storeId`). */
  readonly storeId: string;
  readonly sessions: SessionsApi;
  readonly turns: TurnsApi;
  readonly history: HistoryApi;
  readonly gate: GateApi;
  readonly owner: OwnerApi & OwnerTokensApi & OwnerRememberApi;
  readonly slots: SlotsApi;
  readonly facts: FactsApi;
  readonly ledger: LedgerApi;
  readonly probes: ProbesApi;
  readonly arrival: ArrivalApi;
  readonly tools: ToolsApi;
  readonly commitments: CommitmentsApi;
  readonly actions: ActionsApi;
  readonly recall: RecallApi;
  readonly vectors: VectorsApi;
  /** memledger's own reflection: a model proposes through the gate (needs `EngineConfig.llm`). */
  readonly reflection: ReflectionApi;
  /** memledger's living summaries: sentences checked against their turns (needs `EngineConfig.llm`). */
  readonly summaries: SummariesApi;
}

/** Engine-wide: the store, its subjects, and the engine's lifetime. */
export interface Engine {
  readonly kind: 'pglite' | 'postgres';
  readonly location: string;
  /**
   * The store's identity, made once by its migrations: a head recorded outside the store (the
   * owner's head file) names the store it belongs to by this id.
   */
  readonly storeId: string;
  /** What opening rebuilt when `reindex: true` met an outdated recall index; null otherwise. */
  readonly reindexed: { turns: number; facts: number } | null;
  /** A handle on one subject; no argument: the default subject `owner`. */
  subject(id?: string): SubjectHandle;
  readonly subjects: {
    /** Creates a subject with the default slots; an existing one is left as it is. */
    create(id?: string): Promise<{ id: string; created: boolean }>;
    /** Every subject's id, in order. */
    list(): Promise<string[]>;
    /**
     * Writes everything of a subject into a new folder (docs/EXPORT.md): its rows per kind as JSON
     * Lines and a manifest with their SHA-256 digests. No secret is in it; vectors only with
     * `withVectors`. The owner's: no server face offers it to a token.
     */
    export(id: string, out: string, options?: ExportOptions): Promise<ExportSummary>;
    /**
     * Imports an export into this store, as the subject it was taken from, which must be new or
     * empty here: all or nothing. Refused before anything is written when a byte of it changed
     * (EXPORT_DIGEST_MISMATCH), a row is malformed (EXPORT_INVALID), the decision chain is cut,
     * reordered or signed by another key (CHAIN_BROKEN; WRONG_KEY when the engine's anchor holds
     * another owner key), or the subject holds records here (SUBJECT_NOT_EMPTY).
     */
    import(path: string, options?: ImportOptions): Promise<ImportSummary>;
  };
  /**
   * What the servers authenticate a token with. Tokens are made, listed and revoked in their
   * subject's owner namespace (`handle.owner.createToken`, `tokens`, `revokeToken`), with that
   * subject's owner key (docs/SERVER.md).
   */
  readonly tokens: TokensApi;
  /**
   * Writes a backup of the whole store into a new folder (docs/EXPORT.md, "Backup and restore"):
   * every table, read in one snapshot while other processes go on writing. `restoreBackup` puts
   * it into a new store.
   */
  backup(
    out: string,
    options?: { onProgress?: (p: TransferProgress) => void },
  ): Promise<BackupSummary>;
  /** Adds a host block to every arrival (read-only SQL inside a read-only transaction). */
  addArrivalBlock(def: HostBlockDef): void;
  /** Closes the store; every method rejects with ENGINE_CLOSED afterwards. */
  close(): Promise<void>;
}
