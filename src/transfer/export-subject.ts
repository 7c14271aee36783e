import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { EngineError } from '../domain/errors.js';
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  exportedKinds,
  MANIFEST_FILE,
  type ExportManifest,
  type ManifestFile,
} from '../domain/export-format.js';
import { ExportSql } from '../store/export-sql.js';
import type { SqlClient } from '../store/sql-client.js';

/** Progress of a long export or import: rows done of all rows, and the kind it is at. */
export interface TransferProgress {
  kind: string;
  done: number;
  total: number;
}

export interface ExportOptions {
  /** Also the turns' and facts' vectors (a new embedder would make them again anyway). */
  withVectors?: boolean;
  onProgress?: (p: TransferProgress) => void;
}

/** What an export wrote. */
export interface ExportSummary {
  subject: string;
  /** The folder written. */
  path: string;
  manifest: ExportManifest;
  /** All files' bytes, the manifest's included. */
  bytes: number;
}

/** A path that may be written: absent, or an empty folder. INVALID_ARGUMENT otherwise. */
function requireFreeFolder(path: string): void {
  if (!existsSync(path)) {
    if (!existsSync(dirname(path))) {
      throw new EngineError('INVALID_ARGUMENT', `the folder ${dirname(path)} does not exist`, {
        data: { field: 'out' },
      });
    }
    return;
  }
  let entries: string[];
  try {
    entries = readdirSync(path);
  } catch {
    throw new EngineError('INVALID_ARGUMENT', `${path} exists and is not a folder`, {
      data: { field: 'out' },
    });
  }
  if (entries.length > 0) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `${path} is not empty: an export is written into a new folder, never over another`,
      { data: { field: 'out' } },
    );
  }
}

/**
 * Writes a subject's export (docs/EXPORT.md) into the folder `out`: every kind's rows, read in one
 * snapshot of the store (a repeatable-read transaction), then the manifest. The files are written
 * beside it first and the folder renamed into place once the manifest is written, so `out` never
 * holds a partial export. The same subject gives the same bytes (no time of export, no store id).
 */
export async function exportSubject(
  client: SqlClient,
  subjectId: string,
  out: string,
  options: ExportOptions = {},
): Promise<ExportSummary> {
  const path = resolve(out);
  requireFreeFolder(path);
  const partial = `${path}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  const withVectors = options.withVectors === true;
  try {
    const manifest = await client.transaction(async (tx) => {
      await tx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      await tx.exec(`SET LOCAL TimeZone = 'UTC'`);
      const sql = new ExportSql(tx);
      const schema = await sql.schemaVersion();
      const kinds = exportedKinds(withVectors);
      const totals = await Promise.all(kinds.map((k) => sql.count(k, subjectId)));
      const total = totals.reduce((a, b) => a + b, 0);
      let done = 0;
      const files: ManifestFile[] = [];
      let owner: string | null = null;
      const chain: ExportManifest['chain'] = { length: 0, root: null, head: null };
      for (const kind of kinds) {
        const { columns, text } = await sql.columns(kind);
        const file = `${kind.name}.jsonl`;
        const fd = openSync(join(partial, file), 'wx', 0o600);
        const hash = createHash('sha256');
        let rows = 0;
        let bytes = 0;
        try {
          for await (const batch of sql.rows(kind, columns, text, subjectId)) {
            const chunk = Buffer.from(`${batch.join('\n')}\n`, 'utf8');
            writeSync(fd, chunk);
            hash.update(chunk);
            bytes += chunk.length;
            rows += batch.length;
            done += batch.length;
            if (kind.name === 'subjects') {
              owner = (JSON.parse(batch[0]!) as { owner_key_id: string | null }).owner_key_id;
            }
            if (kind.name === 'decisions') {
              const first = JSON.parse(batch[0]!) as { seq: number; hash: string };
              const last = JSON.parse(batch.at(-1)!) as { seq: number; hash: string };
              if (first.seq === 1) chain.root = first.hash;
              chain.length = last.seq;
              chain.head = last.hash;
            }
            options.onProgress?.({ kind: kind.name, done, total });
          }
        } finally {
          closeSync(fd);
        }
        files.push({ kind: kind.name, file, columns, rows, bytes, sha256: hash.digest('hex') });
      }
      if (files[0]?.rows !== 1) {
        throw new EngineError('SUBJECT_NOT_FOUND', `subject "${subjectId}" does not exist`);
      }
      const m: ExportManifest = {
        format: EXPORT_FORMAT,
        version: EXPORT_VERSION,
        schema,
        subject: subjectId,
        ownerKeyId: owner,
        chain,
        withVectors,
        files,
      };
      return m;
    });
    const text = `${JSON.stringify(manifest, null, 2)}\n`;
    const fd = openSync(join(partial, MANIFEST_FILE), 'wx', 0o600);
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    // the empty folder the caller named (rmdir refuses one that filled up meanwhile)
    if (existsSync(path)) rmdirSync(path);
    renameSync(partial, path);
    const bytes = manifest.files.reduce((a, f) => a + f.bytes, 0) + Buffer.byteLength(text, 'utf8');
    return { subject: subjectId, path, manifest, bytes };
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
}
