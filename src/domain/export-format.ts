import { EngineError } from './errors.js';

/**
 * The export format (docs/EXPORT.md): a folder with `manifest.json` and one JSON Lines file per
 * kind of record, each line one row as the store holds it (its columns by name, as PostgreSQL's
 * `row_to_json` writes them). Pure: what the kinds are, in the order an import writes them, what a
 * manifest says, and the checks a file must pass before anything of it is written.
 */

export const EXPORT_FORMAT = 'memledger-export';
export const EXPORT_VERSION = 1;
export const MANIFEST_FILE = 'manifest.json';

/** One kind of record: a table of the subject's, and how it is read and written. */
export interface ExportKind {
  /** The kind's name, its table and its file (`<name>.jsonl`). */
  name: string;
  /** How its rows are ordered in the file (the table's key; text compared byte by byte). */
  order: string;
  /**
   * The subject's rows: `subject_id = $1`, or how else they are found (`subjects` by its id; the
   * calibrations the subject's probe records cite).
   */
  where: string;
  /** Columns not exported: derived from others (analysed terms) or local to a store. */
  omit?: readonly string[];
  /** Exported only with `withVectors`. */
  vectors?: true;
  /** Rows several subjects may share: one already in the store is kept (calibrations). */
  shared?: true;
  /**
   * Its `seq` is the store's own order (an identity column every subject shares): not exported;
   * an import writes the rows in the file's order and the store numbers them, so they keep their
   * order and follow every row the store holds.
   */
  sequence?: true;
}

const SUBJECT_ROWS = 'subject_id = $1';

/**
 * Every kind, in the order an import writes them (foreign keys among facts and retractions are
 * deferred to the commit; every other reference points at a kind written before it). Not
 * exported: the recall index (postings, term counts, corpus totals), made again from the turns and
 * facts as they are written; the store's identity, its analyzer version and migration history.
 */
export const EXPORT_KINDS: readonly ExportKind[] = [
  { name: 'subjects', order: 'id', where: 'id = $1' },
  { name: 'slots', order: 'name', where: SUBJECT_ROWS },
  { name: 'sessions', order: 'id', where: SUBJECT_ROWS },
  { name: 'turns', order: 'session_id, seq', where: SUBJECT_ROWS, omit: ['terms'] },
  { name: 'utility_usage', order: 'session_id, kind', where: SUBJECT_ROWS },
  { name: 'dropped_proposals', order: 'id', where: SUBJECT_ROWS },
  {
    name: 'probe_calibrations',
    order: 'id',
    where: 'id IN (SELECT calibration_id FROM probe_records WHERE subject_id = $1)',
    omit: ['seq', 'imported'],
    shared: true,
  },
  {
    name: 'probe_records',
    order: 'seq',
    where: SUBJECT_ROWS,
    omit: ['seq'],
    sequence: true,
  },
  { name: 'facts', order: 'id', where: SUBJECT_ROWS, omit: ['terms'] },
  { name: 'retractions', order: 'id', where: SUBJECT_ROWS },
  { name: 'decisions', order: 'seq', where: SUBJECT_ROWS },
  { name: 'commitments', order: 'id', where: SUBJECT_ROWS },
  { name: 'actions', order: 'id', where: SUBJECT_ROWS },
  { name: 'tools', order: 'name', where: SUBJECT_ROWS },
  {
    name: 'arrival_manifests',
    order: 'seq',
    where: SUBJECT_ROWS,
    omit: ['seq'],
    sequence: true,
  },
  { name: 'reflections', order: 'id', where: SUBJECT_ROWS },
  { name: 'reflection_items', order: 'reflection_id, position', where: SUBJECT_ROWS },
  { name: 'summaries', order: 'id', where: SUBJECT_ROWS },
  { name: 'summary_sentences', order: 'summary_id, position', where: SUBJECT_ROWS },
  { name: 'forget_requests', order: 'id', where: SUBJECT_ROWS },
  { name: 'policy_forgets', order: 'id', where: SUBJECT_ROWS },
  { name: 'access_tokens', order: 'id', where: SUBJECT_ROWS },
  { name: 'turn_vectors', order: 'model, session_id, seq', where: SUBJECT_ROWS, vectors: true },
  { name: 'fact_vectors', order: 'model, fact_id', where: SUBJECT_ROWS, vectors: true },
];

/** The kinds an export of these options holds. */
export const exportedKinds = (withVectors: boolean): ExportKind[] =>
  EXPORT_KINDS.filter((k) => withVectors || k.vectors !== true);

/** One kind's file, as the manifest lists it. */
export interface ManifestFile {
  kind: string;
  file: string;
  /** Its columns, in the order each line gives them. */
  columns: string[];
  /** Its lines (one row each). */
  rows: number;
  bytes: number;
  /** SHA-256 of the file's bytes, in hex. */
  sha256: string;
}

/** `manifest.json`. */
export interface ExportManifest {
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  /** The schema (migration) version of the store it was taken from. */
  schema: number;
  subject: string;
  /** The subject's owner key id, null when it has none. */
  ownerKeyId: string | null;
  /** The decision chain as exported: its length, link 1's hash, and its head's. */
  chain: { length: number; root: string | null; head: string | null };
  withVectors: boolean;
  files: ManifestFile[];
}

const unreadable = (why: string, data: Record<string, unknown> = {}): EngineError =>
  new EngineError('EXPORT_UNREADABLE', `the export cannot be read: ${why}`, { data });

const HEX64 = /^[0-9a-f]{64}$/;
const COLUMN = /^[a-z_][a-z0-9_]*$/;

/**
 * The manifest a text holds, checked for shape: EXPORT_UNREADABLE when it is not JSON, not this
 * format, a version this memledger does not read, or a schema newer than `schema` (the store's).
 */
export function parseManifest(text: string, schema: number): ExportManifest {
  let m: Partial<ExportManifest> & Record<string, unknown>;
  try {
    m = JSON.parse(text) as typeof m;
  } catch {
    throw unreadable(`${MANIFEST_FILE} is not JSON`);
  }
  if (typeof m !== 'object' || m === null || m.format !== EXPORT_FORMAT) {
    throw unreadable(`${MANIFEST_FILE} is not a memledger export's manifest`);
  }
  if (m.version !== EXPORT_VERSION) {
    throw unreadable(
      `it is format version ${String(m.version)}, and this memledger reads version ${EXPORT_VERSION}`,
    );
  }
  if (!Number.isSafeInteger(m.schema) || (m.schema as number) < 1) {
    throw unreadable(`${MANIFEST_FILE} names no schema version`);
  }
  if ((m.schema as number) > schema) {
    throw unreadable(
      `it was taken from a store at schema version ${String(m.schema)}, newer than this memledger's ${schema}: upgrade memledger to import it`,
    );
  }
  const chain = m.chain as ExportManifest['chain'] | undefined;
  const hashOrNull = (v: unknown): boolean =>
    v === null || (typeof v === 'string' && HEX64.test(v));
  if (
    typeof m.subject !== 'string' ||
    m.subject.length === 0 ||
    !(m.ownerKeyId === null || typeof m.ownerKeyId === 'string') ||
    typeof m.withVectors !== 'boolean' ||
    typeof chain !== 'object' ||
    chain === null ||
    !Number.isSafeInteger(chain.length) ||
    chain.length < 0 ||
    !hashOrNull(chain.root) ||
    !hashOrNull(chain.head) ||
    !Array.isArray(m.files)
  ) {
    throw unreadable(`${MANIFEST_FILE} lacks a field or has one of the wrong type`);
  }
  const expected = exportedKinds(m.withVectors).map((k) => k.name);
  const files = m.files as unknown[];
  const listed = files.map((f) => (f as Partial<ManifestFile> | null)?.kind);
  if (listed.join(',') !== expected.join(',')) {
    throw unreadable(
      `${MANIFEST_FILE} lists the kinds ${listed.join(', ')}; an export holds ${expected.join(', ')}, in that order`,
    );
  }
  for (const raw of files) {
    const f = raw as Partial<ManifestFile>;
    if (
      f.file !== `${String(f.kind)}.jsonl` ||
      !Array.isArray(f.columns) ||
      f.columns.length === 0 ||
      !f.columns.every((c) => typeof c === 'string' && COLUMN.test(c)) ||
      new Set(f.columns).size !== f.columns.length ||
      !Number.isSafeInteger(f.rows) ||
      (f.rows as number) < 0 ||
      !Number.isSafeInteger(f.bytes) ||
      (f.bytes as number) < 0 ||
      typeof f.sha256 !== 'string' ||
      !HEX64.test(f.sha256)
    ) {
      throw unreadable(`${MANIFEST_FILE}'s entry for ${String(f.kind)} is malformed`, {
        kind: f.kind,
      });
    }
  }
  return m as ExportManifest;
}

/**
 * The rows of one kind's file, each checked: an object with exactly the manifest's columns, of
 * the manifest's subject. EXPORT_INVALID (naming the file and line) otherwise. `text` has passed
 * its digest already; this catches an export written wrong, not one changed since.
 */
export function parseRows(
  file: ManifestFile,
  text: string,
  subject: string,
): Record<string, unknown>[] {
  const invalid = (line: number, why: string): EngineError =>
    new EngineError('EXPORT_INVALID', `${file.file}, line ${line}: ${why}`, {
      data: { file: file.file, line },
    });
  if (text.length > 0 && !text.endsWith('\n')) {
    throw invalid(file.rows, 'the file does not end with a line break');
  }
  const lines = text.length === 0 ? [] : text.slice(0, -1).split('\n');
  if (lines.length !== file.rows) {
    throw invalid(lines.length, `it holds ${lines.length} rows; the manifest says ${file.rows}`);
  }
  const columns = [...file.columns].sort().join(',');
  const subjectColumn = file.kind === 'subjects' ? 'id' : 'subject_id';
  const owned = file.columns.includes(subjectColumn);
  return lines.map((line, i) => {
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      throw invalid(i + 1, 'not JSON');
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      throw invalid(i + 1, 'not an object');
    }
    const r = row as Record<string, unknown>;
    if (Object.keys(r).sort().join(',') !== columns) {
      throw invalid(i + 1, "its columns are not the manifest's");
    }
    if (owned && r[subjectColumn] !== subject) {
      throw invalid(
        i + 1,
        `it belongs to subject ${JSON.stringify(r[subjectColumn])}, not ${subject}`,
      );
    }
    return r;
  });
}
