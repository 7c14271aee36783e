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
export { TURN_ROLES } from './domain/turn.js';
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
