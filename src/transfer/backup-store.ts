import { EngineError } from '../domain/errors.js';
import { EXPORT_KINDS, type ManifestFile } from '../domain/export-format.js';
import { ExportSql } from '../store/export-sql.js';
import type { ChainReport } from '../domain/decision-chain.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import {
  openFolder,
  writeFolder,
  type FolderReader,
  type TransferProgress,
} from './jsonl-folder.js';

/**
 * A backup of a whole store (docs/EXPORT.md, "Backup and restore"): every table's rows as they
 * are, read in one snapshot while other processes go on writing, in the folder format an export
 * uses. The recall index is not in it: a restore makes it again from the turns' stored terms, as
 * each turn's insert always has. Restored into a new store only, with its identity, so the owner's
 * head files name it as before.
 */

export const BACKUP_FORMAT = 'memledger-backup';
export const BACKUP_VERSION = 1;

/** The tables a backup holds, in the order a restore writes them. */
export const BACKUP_TABLES: readonly string[] = [
  'store_meta',
  'recall_index',
  ...EXPORT_KINDS.map((k) => k.name),
];

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  schema: number;
  storeId: string;
  files: ManifestFile[];
}

export interface BackupSummary {
  path: string;
  manifest: BackupManifest;
  bytes: number;
}

export interface RestoreSummary {
  storeId: string;
  subjects: string[];
  rows: Record<string, number>;
}

/** Writes a backup of the store `client` reads into the new folder `out`. */
export async function backupStore(
  client: SqlClient,
  out: string,
  options: { onProgress?: (p: TransferProgress) => void } = {},
): Promise<BackupSummary> {
  const written = await writeFolder(out, (kindFile) =>
    client.transaction(async (tx) => {
      await tx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      await tx.exec(`SET LOCAL TimeZone = 'UTC'`);
      const sql = new ExportSql(tx);
      const schema = await sql.schemaVersion();
      // one statement at a time: a transaction is one connection
      const totals: number[] = [];
      for (const t of BACKUP_TABLES) totals.push(await sql.countAll(t));
      const total = totals.reduce((a, b) => a + b, 0);
      let done = 0;
      let storeId = '';
      for (const table of BACKUP_TABLES) {
        const columns = await sql.tableColumns(table);
        const sink = kindFile(table, columns);
        for await (const batch of sql.allRows(table, columns)) {
          sink.write(batch);
          done += batch.length;
          if (table === 'store_meta') {
            storeId = (JSON.parse(batch[0]!) as { store_id: string }).store_id;
          }
          options.onProgress?.({ kind: table, done, total });
        }
      }
      return { format: BACKUP_FORMAT, version: BACKUP_VERSION, schema, storeId } as const;
    }),
  );
  return { path: written.path, manifest: written.manifest, bytes: written.bytes };
}

const unreadable = (why: string): EngineError =>
  new EngineError('EXPORT_UNREADABLE', `the backup cannot be read: ${why}`);

function parseBackupManifest(text: string, schema: number): BackupManifest {
  let m: Partial<BackupManifest>;
  try {
    m = JSON.parse(text) as Partial<BackupManifest>;
  } catch {
    throw unreadable('manifest.json is not JSON');
  }
  if (typeof m !== 'object' || m === null || m.format !== BACKUP_FORMAT) {
    throw unreadable("manifest.json is not a memledger backup's manifest");
  }
  if (m.version !== BACKUP_VERSION) {
    throw unreadable(
      `it is format version ${String(m.version)}; this memledger reads ${BACKUP_VERSION}`,
    );
  }
  if (!Number.isSafeInteger(m.schema) || (m.schema as number) > schema) {
    throw unreadable(
      `it was taken from a store at schema version ${String(m.schema)}, and this memledger's is ${schema}`,
    );
  }
  const files = Array.isArray(m.files) ? m.files : [];
  if (
    typeof m.storeId !== 'string' ||
    files.map((f) => f.kind).join(',') !== BACKUP_TABLES.join(',') ||
    !files.every(
      (f) =>
        f.file === `${f.kind}.jsonl` &&
        Array.isArray(f.columns) &&
        f.columns.every((c) => typeof c === 'string' && /^[a-z_][a-z0-9_]*$/.test(c)) &&
        Number.isSafeInteger(f.rows) &&
        Number.isSafeInteger(f.bytes) &&
        typeof f.sha256 === 'string',
    )
  ) {
    throw unreadable('manifest.json lacks a field, or lists other tables');
  }
  return m as BackupManifest;
}

/** Every table's lines, each file checked against its digest and its row count. */
function readTables(
  folder: FolderReader,
  manifest: BackupManifest,
): Array<{ file: ManifestFile; rows: string[] }> {
  return manifest.files.map((file) => {
    const text = folder.readText(file);
    const lines = text.length === 0 ? [] : text.slice(0, -1).split('\n');
    if (lines.length !== file.rows) {
      throw new EngineError(
        'EXPORT_INVALID',
        `${file.file} holds ${lines.length} rows; the manifest says ${file.rows}`,
        {
          data: { file: file.file },
        },
      );
    }
    return { file, rows: lines };
  });
}

/**
 * Restores a backup into the new store `client` opened (migrated, never used: no identity, no
 * subject), in one transaction. Every file is checked against its digest before anything is
 * written. STORE_NOT_EMPTY when the store was used.
 */
export async function restoreStore(
  client: SqlClient,
  from: string,
  options: {
    onProgress?: (p: TransferProgress) => void;
    /**
     * The full chain check of a subject as `db` sees the store, for a store of this id
     * (`Trust.auditWithin`): every subject's chain is checked before the restore commits.
     */
    audit?: (storeId: string) => (db: SqlExecutor, subjectId: string) => Promise<ChainReport>;
  } = {},
): Promise<RestoreSummary> {
  const folder = openFolder(from);
  let manifest: BackupManifest;
  let tables: Array<{ file: ManifestFile; rows: string[] }>;
  try {
    manifest = parseBackupManifest(
      folder.manifestText,
      await new ExportSql(client).schemaVersion(),
    );
    tables = readTables(folder, manifest);
  } finally {
    folder.close();
  }
  const field = <T>(table: string, line: string, name: string): T => {
    try {
      return (JSON.parse(line) as Record<string, T>)[name] as T;
    } catch {
      throw new EngineError('EXPORT_INVALID', `${table}.jsonl holds a line that is not JSON`, {
        data: { file: `${table}.jsonl` },
      });
    }
  };
  const rowsOf = (table: string) => tables.find((t) => t.file.kind === table)!.rows;
  const subjects = rowsOf('subjects').map((r) => field<string>('subjects', r, 'id'));
  const meta = rowsOf('store_meta');
  if (meta.length !== 1 || field<string>('store_meta', meta[0]!, 'store_id') !== manifest.storeId) {
    throw new EngineError(
      'EXPORT_INVALID',
      'store_meta.jsonl does not hold the one identity the manifest names',
      { data: { file: 'store_meta.jsonl' } },
    );
  }
  const total = tables.reduce((a, t) => a + t.rows.length, 0);
  let done = 0;
  await client.transaction(async (tx) => {
    const sql = new ExportSql(tx);
    if (await sql.used()) {
      throw new EngineError(
        'STORE_NOT_EMPTY',
        'a backup is restored into a new store only, and this one has been used (it has an identity or a subject)',
      );
    }
    await sql.bulkMode();
    for (const { file, rows } of tables) {
      if (file.kind === 'recall_index') await sql.clearRecallIndex();
      for (let i = 0; i < rows.length; i += 2000) {
        const batch = rows.slice(i, i + 2000);
        await sql.insertLines(file.kind, file.columns, batch);
        done += batch.length;
        options.onProgress?.({ kind: file.kind, done, total });
      }
    }
    for (const subjectId of subjects) await sql.indexSubject(subjectId);
    const audit = options.audit?.(manifest.storeId);
    for (const subjectId of subjects) {
      const report = await audit?.(tx, subjectId);
      if (report !== undefined && !report.ok) {
        throw new EngineError(
          'CHAIN_BROKEN',
          `the backup's decision chain of subject "${subjectId}" is refused at link ${report.brokenAt}: ${report.reason}`,
          { data: { subject: subjectId, seq: report.brokenAt, code: report.code } },
        );
      }
    }
    // last, once every check passed (a sequence moved is not rolled back)
    await sql.moveSequences();
  });
  return {
    storeId: manifest.storeId,
    subjects,
    rows: Object.fromEntries(tables.map((t) => [t.file.kind, t.rows.length])),
  };
}
