// What memledger's own faces (cli/, server/) use besides the public root: helpers for the words
// they print and the notices they send. Not a package export (package.json "exports" names only
// `memledger` and `memledger/rules`), so a host never depends on it.

// The review page's pile notifier POSTs as the http probe does: the same URL policy (http or
// https, no credentials, loopback or allowlisted) and the same guarded request.
export { httpTarget } from './probes/host-policy.js';
export type { HttpTargetRefusal } from './probes/host-policy.js';
export { httpRequest } from './probes/http-request.js';
export type { HttpFailureCode } from './probes/http-request.js';

// The CLI: the head file's records and the head it anchors, a delegation's bound in words, and
// the provider named on the command line.
export { headFileRecords } from './crypto/owner-anchor.js';
export { anchoredHead } from './domain/anchor.js';
export { boundWords } from './domain/trust.js';
export { parseProvider } from './reflection/llm-providers.js';

// What the CLI reads before it opens an engine, or without one, here so that reading it loads no
// engine (src/index.ts exports the same): the owner's key and head files, the model its flags
// name, and the text joins of a Claude Code transcript.
export { generateOwnerKey, loadOwnerKey } from './crypto/owner-key.js';
export { readOwnerPublicKey, writeOwnerKeyFile } from './crypto/owner-key-file.js';
export {
  headFilePath,
  keyFileAnchor,
  recordKeyFileHead,
  recordKeyFileRevocation,
} from './crypto/owner-anchor.js';
export { createLlmClient } from './reflection/llm-providers.js';
export { exportSubjectOf } from './transfer/jsonl-folder.js';
export { LLM_PROVIDERS } from './reflection/llm-client.js';
export { joinTextBlocks } from './history/text-join.js';
export { stripImitatedReceipts } from './history/receipt-strip.js';
