import { anchorKeyMismatch, type OwnerAnchor } from '../domain/anchor.js';
import { verifyChain, type ChainCrypto, type ChainReport } from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import {
  EXPORT_KINDS,
  parseManifest,
  parseRows,
  type ExportManifest,
  type ExportKind,
} from '../domain/export-format.js';
import { analyze, turnTerms } from '../domain/text/analyze.js';
import { lockChain, toLink, type DecisionDbRow } from '../store/decision-sql.js';
import { ExportSql } from '../store/export-sql.js';
import { pgErrorCode } from '../store/store-error.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import { openFolder, type FolderReader, type TransferProgress } from './jsonl-folder.js';

export interface ImportOptions {
  /** The subject to import into: the export's own (its decisions are signed for it). */
  subject?: string;
  onProgress?: (p: TransferProgress) => void;
}

/** What an import wrote. */
export interface ImportSummary {
  subject: string;
  /** Rows written, per kind. */
  rows: Record<string, number>;
  /** The imported chain: its length, link 1's hash and its head's. */
  chain: ExportManifest['chain'];
}

export interface ImportDeps {
  client: SqlClient;
  crypto: Pick<ChainCrypto, 'sha256Hex' | 'verify' | 'keyIdOf'>;
  /** The owner's anchor for a subject, as the engine holds it; null when it holds none. */
  anchor: (subjectId: string) => OwnerAnchor | null;
  /** The full chain check, as `db` sees the store (`Trust.auditWithin`). */
  auditWithin: (db: SqlExecutor, subjectId: string) => Promise<ChainReport>;
}

/** A kind's rows as read from its file, ready to write. */
interface ReadKind {
  kind: ExportKind;
  columns: string[];
  rows: Record<string, unknown>[];
}

const BATCH = 2000;

/**
 * Reads and checks an export folder before anything is written: its manifest, every file against
 * its digest, every row's shape, and the decision chain against the owner's key (the anchor's,
 * when the engine holds one: the export's key must be it) and the heads the owner recorded.
 */
export async function readExport(
  deps: ImportDeps,
  path: string,
  options: ImportOptions,
): Promise<{ manifest: ExportManifest; kinds: ReadKind[] }> {
  const folder = openFolder(path);
  try {
    return await readOpened(deps, folder, options);
  } finally {
    folder.close();
  }
}

async function readOpened(
  deps: ImportDeps,
  folder: FolderReader,
  options: ImportOptions,
): Promise<{ manifest: ExportManifest; kinds: ReadKind[] }> {
  const sql = new ExportSql(deps.client);
  const manifest = parseManifest(folder.manifestText, await sql.schemaVersion());
  if (options.subject !== undefined && options.subject !== manifest.subject) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `the export is subject "${manifest.subject}"'s: its owner's decisions are signed for that subject, so it imports as "${manifest.subject}" only`,
      { data: { field: 'subject' } },
    );
  }
  const kinds: ReadKind[] = [];
  for (const file of manifest.files) {
    const text = folder.readText(file);
    const kind = EXPORT_KINDS.find((k) => k.name === file.kind)!;
    const known = new Set((await sql.columns(kind)).columns);
    const unknown = file.columns.filter((c) => !known.has(c));
    if (unknown.length > 0) {
      throw new EngineError(
        'EXPORT_INVALID',
        `${file.file} has columns this store does not: ${unknown.join(', ')}`,
        { data: { file: file.file } },
      );
    }
    kinds.push({
      kind,
      columns: file.columns,
      rows: parseRows(file, text, manifest.subject),
    });
  }
  checkChain(deps, manifest, kinds);
  return { manifest, kinds };
}

const chainBroken = (reason: string, data: Record<string, unknown> = {}): EngineError =>
  new EngineError('CHAIN_BROKEN', `the export's decision chain is refused: ${reason}`, { data });

/** The chain of the export, every link and signature, before anything is written. */
function checkChain(deps: ImportDeps, manifest: ExportManifest, kinds: readonly ReadKind[]): void {
  const rowsOf = (name: string) => kinds.find((k) => k.kind.name === name)?.rows ?? [];
  const subject = rowsOf('subjects')[0] as
    { owner_public_key: string | null; owner_key_id: string | null } | undefined;
  if (subject === undefined || rowsOf('subjects').length !== 1) {
    throw new EngineError('EXPORT_INVALID', 'subjects.jsonl must hold the subject, once', {
      data: { file: 'subjects.jsonl' },
    });
  }
  let links;
  try {
    links = rowsOf('decisions').map((r) => toLink(r as unknown as DecisionDbRow));
  } catch {
    throw chainBroken('a link is malformed');
  }
  const pem = subject.owner_public_key;
  const keyId = subject.owner_key_id;
  if (manifest.ownerKeyId !== keyId) {
    throw chainBroken("the manifest names another owner key than the subject's");
  }
  if (links.length > 0 && (pem === null || keyId === null)) {
    throw chainBroken('the subject has decisions but no owner key');
  }
  if (pem !== null && deps.crypto.keyIdOf(pem) !== keyId) {
    throw chainBroken(`the subject's owner key is not the key ${String(keyId)} it names`);
  }
  const anchor = deps.anchor(manifest.subject);
  if (anchor !== null && (pem !== null || keyId !== null)) {
    const mismatch = anchorKeyMismatch(anchor, { keyId, publicKeyPem: pem }, deps.crypto);
    if (mismatch !== null) {
      throw new EngineError(
        'WRONG_KEY',
        `the export's owner key ${String(keyId)} is not the owner's key ${anchor.keyId} (from ${anchor.source}): its decisions are not the owner's`,
      );
    }
  }
  const report = verifyChain(links, {
    crypto: deps.crypto,
    publicKeyPem: pem ?? '',
    keyId: keyId ?? '',
  });
  if (!report.ok) {
    throw chainBroken(`link ${report.brokenAt}: ${report.reason}`, {
      seq: report.brokenAt,
      code: report.code,
    });
  }
  const c = manifest.chain;
  if (
    c.length !== report.length ||
    c.head !== (report.length === 0 ? null : report.headHash) ||
    c.root !== (report.rootHash ?? null)
  ) {
    throw chainBroken(
      `the manifest records a chain of ${c.length} links, and decisions.jsonl holds another (${report.length})`,
    );
  }
  // a head the owner recorded for a chain with this first link: the export must still hold it
  for (const h of anchor?.heads ?? []) {
    if (h.root === undefined || h.root !== report.rootHash) continue;
    if (links[h.seq - 1]?.hash !== h.hash) {
      throw chainBroken(
        `the owner's head file records link ${h.seq} of this chain, and the export ${links.length < h.seq ? `ends at link ${links.length}` : 'holds another'}: it was cut`,
        { seq: Math.min(h.seq, links.length + 1), code: 'HEAD_CUT' },
      );
    }
  }
}

/** A row as written: what the file holds, and what the store derives (analysed terms, the mark). */
function completed(kind: ExportKind, row: Record<string, unknown>): Record<string, unknown> {
  switch (kind.name) {
    case 'turns':
      return {
        ...row,
        terms:
          row.forget_id !== null
            ? []
            : turnTerms(row.speaker as string | null, String(row.content)),
      };
    case 'facts':
      return { ...row, terms: analyze(String(row.text)) };
    case 'probe_calibrations':
      return { ...row, imported: true };
    default:
      return row;
  }
}

const DERIVED: Readonly<Record<string, string>> = {
  turns: 'terms',
  facts: 'terms',
  probe_calibrations: 'imported',
};

/**
 * Imports an export folder into an empty subject of this store, in one transaction: all or
 * nothing. Checked before anything is written (`readExport`), and again before it commits: the
 * full chain check of what it wrote, as a read would make it.
 */
export async function importSubject(
  deps: ImportDeps,
  path: string,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const { manifest, kinds } = await readExport(deps, path, options);
  const subjectId = manifest.subject;
  const total = kinds.reduce((a, k) => a + k.rows.length, 0);
  let done = 0;
  try {
    await deps.client.transaction(async (tx) => {
      await lockChain(tx, subjectId);
      const sql = new ExportSql(tx);
      const occupied = await sql.occupied(subjectId);
      if (occupied.length > 0) {
        throw new EngineError(
          'SUBJECT_NOT_EMPTY',
          `subject "${subjectId}" already holds ${occupied.join(', ')} in this store: an export imports into a new or empty subject only`,
          { data: { kinds: occupied } },
        );
      }
      const existing = await tx.query<{ owner_key_id: string | null }>(
        'SELECT owner_key_id FROM subjects WHERE id = $1',
        [subjectId],
      );
      const had = existing.rows[0];
      if (
        had !== undefined &&
        had.owner_key_id !== null &&
        had.owner_key_id !== manifest.ownerKeyId
      ) {
        throw new EngineError(
          'WRONG_KEY',
          `subject "${subjectId}" in this store has owner key ${had.owner_key_id}, and the export ${String(manifest.ownerKeyId)}`,
        );
      }
      if (had !== undefined) await sql.clearEmpty(subjectId);
      await sql.bulkMode();
      for (const { kind, columns, rows } of kinds) {
        const derived = DERIVED[kind.name];
        const cols = derived === undefined ? columns : [...columns, derived];
        for (let i = 0; i < rows.length; i += BATCH) {
          const batch = rows.slice(i, i + BATCH).map((r) => completed(kind, r));
          await sql.insert(kind, cols, batch);
          done += batch.length;
          options.onProgress?.({ kind: kind.name, done, total });
        }
      }
      await sql.indexSubject(subjectId);
      const report = await deps.auditWithin(tx, subjectId);
      if (!report.ok) {
        throw chainBroken(`as written, link ${report.brokenAt}: ${report.reason}`, {
          seq: report.brokenAt,
          code: report.code,
        });
      }
    });
  } catch (err) {
    throw conflict(err) ?? err;
  }
  return {
    subject: subjectId,
    rows: Object.fromEntries(kinds.map((k) => [k.kind.name, k.rows.length])),
    chain: manifest.chain,
  };
}

/**
 * What the database refused of a row the checks let through: a key the store holds already (a
 * token's), a reference to nothing, a value its column does not take.
 */
function conflict(err: unknown): EngineError | null {
  const cause = err instanceof EngineError ? err.cause : err;
  const code = pgErrorCode(cause);
  const why =
    code === '23505'
      ? 'a row of the export is in this store already'
      : code === '23503'
        ? 'a row of the export cites one that is not there'
        : code !== undefined && /^(23|22)/.test(code)
          ? 'a row of the export does not fit its table (a value missing, out of range or of the wrong kind)'
          : null;
  if (why === null) return null;
  return new EngineError('EXPORT_INVALID', `${why}: ${(cause as Error).message}`, { cause });
}
