// The public API: the engine and its subject handles, the entity types they return, the closed
// vocabularies, the error class and codes, prompt formats, embedders and owner-key tools. Pure
// rules a host may want on their own are under `memledger/rules` (src/rules.ts).

// The engine and its handles.
export { createEngine, DEFAULT_SUBJECT, restoreBackup } from './engine.js';
export type { EngineConfig } from './engine.js';
export type { ExportOptions, ExportSummary } from './transfer/export-subject.js';
export type { ImportOptions, ImportSummary } from './transfer/import-subject.js';
export type { BackupManifest, BackupSummary, RestoreSummary } from './transfer/backup-store.js';
export type { TransferProgress } from './transfer/jsonl-folder.js';
export type { ExportManifest, ManifestFile } from './domain/export-format.js';
export { HISTORY_FORMATS } from './domain/history-import/imported-conversation.js';
export type {
  HistoryFormat,
  HistoryParse,
  ImportedConversation,
  ImportedTurn,
  SkippedConversation,
} from './domain/history-import/imported-conversation.js';
export { parseChatGptExport } from './domain/history-import/chatgpt-export.js';
export { parseClaudeExport } from './domain/history-import/claude-export.js';
export { parseOpenAiMessages } from './domain/history-import/openai-messages.js';
export type { Engine, SubjectHandle } from './engine/handle-types.js';
export { DEFAULT_DB } from './store/open-store.js';
export type {
  AddTurnInput,
  AddTurnResult,
  HistoryApi,
  HistoryOptions,
  RecordResponseInput,
  SessionsApi,
  TurnsApi,
} from './history/history-types.js';
export type {
  FactsApi,
  GateApi,
  IntegrityReport,
  OwnerApi,
  PendingProposal,
  SlotsApi,
} from './gate/gate-types.js';
export type { LedgerApi, RetractInput, SettleInput } from './ledger/ledger-types.js';
export type { ForgetResult } from './gate/owner-decisions.js';
export type {
  ForgetPlan,
  ForgetRequest,
  ForgetRequestStatus,
  ForgetScope,
  ForgetTargets,
} from './domain/forget.js';
export { FORGET_REQUEST_STATUSES, FORGET_SCOPES } from './domain/forget.js';
export type { ProbesApi } from './probes/probe-types.js';
export type {
  ActionsApi,
  ArrivalApi,
  CommitmentsApi,
  ManifestPage,
  ManifestsOptions,
  ToolsApi,
} from './arrival/arrival-types.js';
export type {
  EmbedPendingOptions,
  EmbedPendingResult,
  RecallApi,
  RecallItem,
  RecallOptions,
  RecallPassport,
  VectorsApi,
} from './recall/recall-types.js';

// Every list's one paging shape, and the bounds every input is held to (docs/API.md).
export { INPUT_LIMITS } from './domain/input.js';
export type { PageOptions } from './domain/input.js';

// The servers' credentials.
export { TOKEN_PREFIX, TOKEN_ROLES } from './domain/token.js';
export type { TokenInfo, TokenRole } from './domain/token.js';
export type {
  CreatedToken,
  OwnerTokensApi,
  RevokedToken,
  TokensApi,
} from './access/access-tokens.js';

// Errors.
export { EngineError, ERROR_CODES, isEngineError } from './domain/errors.js';
export type { EngineErrorOptions, ErrorCode } from './domain/errors.js';

// Entities and their vocabularies.
export type { FactId, RetractionId } from './domain/ids.js';
export { parseChoice } from './domain/vocabulary.js';
export { TURN_ROLES } from './domain/turn.js';
export type { Turn, TurnRole } from './domain/turn.js';
export type { Session } from './domain/session.js';
export type { ShownMemory } from './domain/manifest.js';
export { RECEIPT_KINDS } from './domain/receipt.js';
export type { HostReceiptReport, Receipt, ReceiptKind } from './domain/receipt.js';
export { UTILITY_KINDS } from './domain/utility.js';
export type { UtilityKind } from './domain/utility.js';
export type { UtilityUsage } from './domain/utility-usage.js';
export type { HistoryMessage, RenderHistoryOptions } from './history/render-history.js';
export type { ResponseBlock } from './history/text-join.js';
export {
  DEFAULT_SLOTS,
  FACT_ORIGINS,
  FACT_STATUSES,
  SLOT_RULES,
  SUMMARY_SCOPES,
} from './domain/fact.js';
export type {
  Citation,
  CitedTurn,
  Fact,
  FactOrigin,
  FactStatus,
  Proposal,
  ProposalEvidence,
  SlotDeclaration,
  SlotRule,
  SummaryScope,
} from './domain/fact.js';
export { DEFAULT_CORRECTION_CUES, DEFAULT_FAILURE_CUES, DROP_CODES } from './domain/gate-rules.js';
export { ATTESTATION_VERDICTS, attest, aboutAgent } from './domain/attestation.js';
export type { Attestation, AttestationVerdict } from './domain/attestation.js';
export type { DropCode } from './domain/gate-rules.js';
export type { GateConfig, ProposeResult } from './gate/proposal-gate.js';
export type {
  DroppedDay,
  DroppedDigest,
  DroppedProposal,
  FieldDigest,
} from './domain/dropped-proposal.js';
export { DECISIONS } from './domain/decision-chain.js';
export type { ChainReport, Decision, DelegationBound } from './domain/decision-chain.js';
export type { DecideResult } from './gate/owner-decisions.js';
export {
  CAUGHT_BY,
  DEFAULT_DUE_DAYS,
  RETRACTION_VERDICTS,
  SETTLED_VERDICTS,
} from './domain/retraction.js';
export type {
  CaughtBy,
  Falsifier,
  RetractionVerdict,
  SettledVerdict,
} from './domain/retraction.js';
export type { Retraction } from './domain/retraction-record.js';
export {
  COMPARE_OPS,
  FILE_PROBE_MODES,
  PROBE_ERROR_CODES,
  PROBE_KINDS,
  PROBE_VERDICTS,
} from './domain/probe.js';
export type {
  CompareOp,
  FileProbeMode,
  FileProbeSpec,
  HttpProbeSpec,
  ProbeErrorCode,
  ProbeKind,
  ProbeSpec,
  ProbeVerdict,
  SqlProbeSpec,
} from './domain/probe.js';
export type { ProbeCalibration, ProbeRecord } from './domain/probe-record.js';
export type { CalibrationSummary } from './probes/probe-types.js';
export { COMMITMENT_STATUSES } from './domain/commitment.js';
export type { Commitment, CommitmentStatus } from './domain/commitment.js';
export { ACTION_STATUSES } from './domain/action.js';
export type { ActionRecord, ActionStatus } from './domain/action.js';
export type { RegisteredTool, ToolRegistration } from './domain/tool.js';
export { TIERS } from './domain/manifest.js';
export type { ArrivalManifest, ManifestDiff, Tier } from './domain/manifest.js';
export type { Arrival, ArrivalConfig } from './arrival/arrival-module.js';
export type { ArrivalBlock, BlockContext, RenderedBlock } from './arrival/blocks.js';
export type { HostBlockDef } from './arrival/host-blocks.js';
export { RECALL_KINDS } from './recall/recall-types.js';
export type { RecallKind } from './recall/recall-types.js';
export { DEFAULT_RANK_PARAMS } from './recall/lexical-rank.js';
export type { RankParams } from './recall/lexical-rank.js';

// Prompt formats: an arrival as a system prompt.
export { anthropicSystem, arrivalText, openAISystem } from './arrival/prompt-formats.js';

// Embedders.
export { openAiEmbedder } from './recall/embedder.js';
export type { Embedder, OpenAiEmbedderOptions } from './recall/embedder.js';
export { localEmbedder } from './recall/local-embedder.js';
export type { LocalEmbedderOptions } from './recall/local-embedder.js';

// Models for memledger's own reflection and summaries (utility generations, never turns).
export { createLlmClient } from './reflection/llm-providers.js';
export { LLM_PROVIDERS } from './reflection/llm-client.js';
export type {
  LlmClient,
  LlmOptions,
  LlmProvider,
  StructuredAnswer,
  StructuredRequest,
} from './reflection/llm-client.js';
export { REFLECTION_PROMPT_VERSION } from './reflection/reflection-module.js';
export type {
  ReflectionApi,
  ReflectionOutcome,
  ReflectionResult,
  ReflectionRun,
} from './reflection/reflection-types.js';
export { SUMMARY_PROMPT_VERSION } from './reflection/summary-prompt.js';
export { SENTENCE_VERDICTS } from './domain/summary-check.js';
export type { SentenceVerdict } from './domain/summary-check.js';
export type { SummariesApi, Summary, SummarySentence } from './reflection/summary-types.js';

// Probe instruments a host can add (EngineConfig.probes.instruments).
export type { ProbeConfig } from './probes/probe-config.js';
export type { ReadOnlySql } from './store/read-only-sql.js';
export type {
  ProbeContext,
  ProbeControls,
  ProbeInstrument,
  RecordedOutcome,
  SourceFallback,
} from './probes/instruments.js';
export { createFileInstrument, FILE_CONTROL_DIR } from './probes/file-probe.js';
export { createSqlInstrument } from './probes/sql-probe.js';
export { createHttpInstrument } from './probes/http-probe.js';
export type { HttpInstrumentOptions } from './probes/http-probe.js';

// The owner's key: made, kept encrypted, loaded to sign decisions.
export { generateOwnerKey, loadOwnerKey } from './crypto/owner-key.js';
export { readOwnerPublicKey, writeOwnerKeyFile } from './crypto/owner-key-file.js';
// The owner's anchor: the key and signed heads every read checks the store against.
export {
  headFilePath,
  keyFileAnchor,
  recordKeyFileHead,
  recordKeyFileRevocation,
} from './crypto/owner-anchor.js';
export type { OwnerAnchor } from './domain/anchor.js';
export type { GeneratedOwnerKey, OwnerKeyOptions, OwnerSigner } from './crypto/owner-key.js';
export type { KdfCost } from './crypto/owner-key-format.js';
