import { sql as foundation } from './0001-foundation.js';
import { sql as factsGate } from './0002-facts-gate.js';
import { sql as probes } from './0003-probes.js';
import { sql as retractions } from './0004-retractions.js';
import { sql as arrival } from './0005-arrival.js';
import { backfill as recallBackfill, sql as recall } from './0006-recall.js';
import { sql as vectors } from './0007-vectors.js';
import { backfill as analyzerBackfill, sql as analyzerVersion } from './0008-analyzer-version.js';
import { sql as trust } from './0009-trust.js';
import { sql as probeRole } from './0010-probe-role.js';
import { sql as tokens } from './0011-tokens.js';
import { sql as subjectKeys } from './0012-subject-keys.js';
import { sql as reflections } from './0013-reflections.js';
import { sql as summaries } from './0014-summaries.js';
import { sql as sessionTerms } from './0015-session-terms.js';
import { sql as attestation } from './0016-attestation.js';
import { sql as signedRevocation } from './0017-signed-revocation.js';
import { sql as coveringLinks } from './0018-covering-links.js';
import { sql as signedRetraction } from './0019-signed-retraction.js';
import { sql as forget } from './0020-forget.js';
import { sql as forgetPolicy } from './0021-forget-policy.js';
import { sql as portable } from './0022-portable.js';
import { sql as bulkIndex } from './0023-bulk-index.js';
import type { SqlExecutor } from '../sql-client.js';

/** One schema step: SQL (its checksum is checked forever after) and an optional backfill. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * Data the SQL cannot compute (analysed terms), filled in the same transaction. `applied`:
   * the migrations this run applied before this one.
   */
  backfill?: (tx: SqlExecutor, run: { readonly applied: readonly number[] }) => Promise<void>;
}

/** One list for both engines; append only, never edit an applied migration. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'foundation', sql: foundation },
  { version: 2, name: 'facts-gate', sql: factsGate },
  { version: 3, name: 'probes', sql: probes },
  { version: 4, name: 'retractions', sql: retractions },
  { version: 5, name: 'arrival', sql: arrival },
  { version: 6, name: 'recall', sql: recall, backfill: recallBackfill },
  { version: 7, name: 'vectors', sql: vectors },
  { version: 8, name: 'analyzer-version', sql: analyzerVersion, backfill: analyzerBackfill },
  { version: 9, name: 'trust', sql: trust },
  { version: 10, name: 'probe-role', sql: probeRole },
  { version: 11, name: 'tokens', sql: tokens },
  { version: 12, name: 'subject-keys', sql: subjectKeys },
  { version: 13, name: 'reflections', sql: reflections },
  { version: 14, name: 'summaries', sql: summaries },
  { version: 15, name: 'session-terms', sql: sessionTerms },
  { version: 16, name: 'attestation', sql: attestation },
  { version: 17, name: 'signed-revocation', sql: signedRevocation },
  { version: 18, name: 'covering-links', sql: coveringLinks },
  { version: 19, name: 'signed-retraction', sql: signedRetraction },
  { version: 20, name: 'forget', sql: forget },
  { version: 21, name: 'forget-policy', sql: forgetPolicy },
  { version: 22, name: 'portable', sql: portable },
  { version: 23, name: 'bulk-index', sql: bulkIndex },
];
