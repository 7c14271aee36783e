// `memledger/rules`: the engine's pure rules, for hosts that want one on its own (to check a
// proposal before sending it, strip imitated receipts from a reply, render a receipt line…).
// None of them touches a store; the engine applies every one of them itself.

// History: receipts, receipt stripping, text joins, utility generations, rendering.
export { RECEIPT_PREFIX, receiptFromReport, renderReceiptLine } from './domain/receipt.js';
export { stripImitatedReceipts } from './history/receipt-strip.js';
export type { StripResult } from './history/receipt-strip.js';
export { joinRounds, joinTextBlocks, textJoinSeparator } from './history/text-join.js';
export { receiptReportFromBlocks } from './history/response-receipt.js';
export { historyMessages, renderHistory } from './history/render-history.js';
export { detectUtility } from './domain/utility.js';

// Showing text memledger did not write in front of a model (shownText, in a layout): receipt
// markers defanged, look-alikes too; line breaks laid out; what does not show as code points.
export {
  defangReceiptMarkers,
  oneLine,
  SHOWN_LAYOUTS,
  shownInline,
  shownJson,
  shownText,
} from './domain/shown-text.js';
export type { ShownLayout } from './domain/shown-text.js';

// What memledger's tools tell a model (MCP and the framework adapters say the same).
export {
  renderForgetAnswer,
  renderProposeAnswer,
  recallForModel,
  renderRecallAnswer,
  renderRecallLine,
} from './domain/tool-answers.js';
export type { ProposeAnswer, RecallAnswerItem } from './domain/tool-answers.js';

// Ids: what a subject or session id may look like (INVALID_ARGUMENT otherwise).
export { requireId } from './domain/turn.js';

// The gate: quotes, attestation, the checks a proposal must pass.
export { isAttestedBy } from './domain/text/compare.js';
export { locateQuote, normalizeForQuote, quoteFoundIn } from './domain/text/fold.js';
export { checkProposal } from './domain/gate-rules.js';
export type { GateContext, GateVerdict } from './domain/gate-rules.js';
export {
  attestationFlag,
  isoDay,
  passportDate,
  renderCitations,
  renderFactLine,
  storedVerdictDiffers,
  unattestedNote,
} from './domain/fact-render.js';

// The decision chain.
export { verifyChain } from './domain/decision-chain.js';
export type { ChainCrypto, DecisionLink } from './domain/decision-chain.js';

// Retractions and probes: falsifier polarity, probe specs and verdicts.
export { checkPolarity, normalizeObservation } from './domain/retraction.js';
export { parseProbeSpec } from './domain/probe-spec.js';
export { controlsDiverge, fileVerdict, httpVerdict, sqlVerdict } from './domain/probe.js';
export type { FileObservation, FileVerdict, ProbeOutcome } from './domain/probe.js';

// Recall's text analysis: the terms the index stores for a text.
export { analyze, ANALYZER_VERSION } from './domain/text/analyze.js';
