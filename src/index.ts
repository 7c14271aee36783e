export { createEngine, DEFAULT_SUBJECT } from './engine.js';
export type { Engine, EngineConfig, HistoryOptions } from './engine.js';
export { EngineError, ERROR_CODES, isEngineError } from './domain/errors.js';
export type { ErrorCode } from './domain/errors.js';
export {
  RECEIPT_KINDS,
  RECEIPT_PREFIX,
  receiptFromReport,
  renderReceiptLine,
} from './domain/receipt.js';
export type { HostReceiptReport, Receipt, ReceiptKind } from './domain/receipt.js';
export { TURN_ROLES, requireId } from './domain/turn.js';
export type { Turn, TurnRole } from './domain/turn.js';
export { UTILITY_KINDS, detectUtility } from './domain/utility.js';
export type { UtilityKind } from './domain/utility.js';
export { stripImitatedReceipts } from './history/receipt-strip.js';
export type { StripResult } from './history/receipt-strip.js';
export { joinRounds, joinTextBlocks, textJoinSeparator } from './history/text-join.js';
export type { ResponseBlock } from './history/text-join.js';
export { receiptReportFromBlocks } from './history/response-receipt.js';
export { historyMessages, renderHistory } from './history/render-history.js';
export type { RenderHistoryOptions } from './history/render-history.js';
export type { AddTurnInput, AddTurnResult, RecordResponseInput } from './history/turn-recorder.js';
export type { Session } from './store/session-sql.js';
export type { UtilityUsage } from './store/usage-sql.js';
export type { SqlClient, SqlExecutor, SqlCapabilities, QueryResult } from './store/sql-client.js';
export { DEFAULT_DB } from './store/open-store.js';
export { FACT_ORIGINS, FACT_STATUSES, SLOT_RULES, DEFAULT_SLOTS } from './domain/fact.js';
export type {
  CitedTurn,
  Fact,
  FactOrigin,
  FactStatus,
  Proposal,
  ProposalEvidence,
  SlotDeclaration,
  SlotRule,
} from './domain/fact.js';
export { renderFactLine } from './domain/fact-render.js';
export {
  DROP_CODES,
  DEFAULT_CORRECTION_CUES,
  DEFAULT_FAILURE_CUES,
  checkProposal,
} from './domain/gate-rules.js';
export type { DropCode, GateContext, GateVerdict } from './domain/gate-rules.js';
export { isAttestedBy, normalizeForQuote, quoteFoundIn } from './domain/text-normalize.js';
export { verifyChain } from './domain/decision-chain.js';
export type { ChainCrypto, ChainReport, Decision, DecisionLink } from './domain/decision-chain.js';
export {
  generateOwnerKey,
  loadOwnerKey,
  nodeChainCrypto,
  readOwnerPublicKey,
  readPassphrase,
  writeOwnerKeyFile,
} from './crypto/owner-key.js';
export type { GateApi, PendingProposal } from './gate/gate-api.js';
export type { DecideResult } from './gate/owner-decisions.js';
export type { OwnerSigner } from './crypto/owner-key.js';
export type { ProposeResult, GateConfig } from './gate/proposal-gate.js';
export type { DroppedProposal } from './store/dropped-sql.js';
export {
  COMPARE_OPS,
  FILE_PROBE_MODES,
  PROBE_ERROR_CODES,
  PROBE_KINDS,
  PROBE_VERDICTS,
  compareNumbers,
  controlsDiverge,
  countOccurrences,
  fileVerdict,
  httpVerdict,
  sqlVerdict,
} from './domain/probe.js';
export type {
  CompareOp,
  FileObservation,
  FileProbeMode,
  FileProbeSpec,
  FileVerdict,
  HttpProbeSpec,
  ProbeErrorCode,
  ProbeKind,
  ProbeOutcome,
  ProbeSpec,
  ProbeVerdict,
  SqlProbeSpec,
} from './domain/probe.js';
export { parseProbeSpec } from './domain/probe-spec.js';
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
export { calibrate, instrumentFingerprint } from './probes/calibration.js';
export type { CalibrationResult } from './probes/calibration.js';
export type { ProbeConfig } from './probes/probe-config.js';
export type { CalibrationSummary, ProbeApi, ProbeRunOptions } from './probes/probe-service.js';
export type { ProbeCalibration, ProbeRecord } from './store/probe-sql.js';
export { RetractionLedger } from './ledger/retraction-ledger.js';
export type { FalsifierProbes, RetractInput, SettleInput } from './ledger/retraction-ledger.js';
export type { Retraction } from './store/retraction-sql.js';
export {
  CAUGHT_BY,
  RETRACTION_VERDICTS,
  DEFAULT_DUE_DAYS,
  checkPolarity,
  normalizeObservation,
} from './domain/retraction.js';
export type { CaughtBy, RetractionVerdict, Falsifier } from './domain/retraction.js';
export { TIERS } from './arrival/blocks.js';
export type { ArrivalBlock, BlockContext, RenderedBlock, Tier } from './arrival/blocks.js';
export type { Arrival, ArrivalApi, ArrivalConfig } from './arrival/arrival-api.js';
export type { HostBlockDef } from './arrival/host-blocks.js';
export type { ArrivalManifest, ManifestDiff } from './arrival/manifest.js';
export { anthropicSystem, arrivalText, openAISystem } from './arrival/prompt-formats.js';
export type { Commitment, CommitmentStatus } from './store/commitment-sql.js';
export type { ActionRecord, ActionStatus } from './store/action-sql.js';
export type { ToolRegistration } from './store/tool-sql.js';
export { createRecallApi, RECALL_KINDS } from './recall/recall-api.js';
export type {
  RecallApi,
  RecallItem,
  RecallKind,
  RecallOptions,
  RecallPassport,
} from './recall/recall-api.js';
export { analyze } from './domain/analyze.js';
export { DEFAULT_RANK_PARAMS } from './recall/lexical-rank.js';
export { MONTH_NAMES } from './recall/query-cues.js';
export type { RankParams } from './recall/lexical-rank.js';
export { openAiEmbedder, parseEmbeddingsResponse } from './recall/embedder.js';
export type { Embedder, OpenAiEmbedderOptions } from './recall/embedder.js';
export { localEmbedder, type LocalEmbedderOptions } from './recall/local-embedder.js';
export type { EmbedPendingOptions, EmbedPendingResult } from './recall/vectors.js';
