import { EngineError } from '../domain/errors.js';
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  exportedKinds,
  type ExportManifest,
} from '../domain/export-format.js';
import { ExportSql } from '../store/export-sql.js';
import type { SqlClient } from '../store/sql-client.js';
import { writeFolder, type TransferProgress } from './jsonl-folder.js';

export type { TransferProgress } from './jsonl-folder.js';

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
  const withVectors = options.withVectors === true;
  const written = await writeFolder(out, (kindFile) =>
    client.transaction(async (tx) => {
      await tx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      await tx.exec(`SET LOCAL TimeZone = 'UTC'`);
      const sql = new ExportSql(tx);
      const schema = await sql.schemaVersion();
      const kinds = exportedKinds(withVectors);
      // one statement at a time: a transaction is one connection
      const totals: number[] = [];
      for (const k of kinds) totals.push(await sql.count(k, subjectId));
      if (totals[0] !== 1) {
        throw new EngineError('SUBJECT_NOT_FOUND', `subject "${subjectId}" does not exist`);
      }
      const total = totals.reduce((a, b) => a + b, 0);
      let done = 0;
      let owner: string | null = null;
      const chain: ExportManifest['chain'] = { length: 0, root: null, head: null };
      for (const kind of kinds) {
        const { columns, text } = await sql.columns(kind);
        const sink = kindFile(kind.name, columns);
        for await (const batch of sql.rows(kind, columns, text, subjectId)) {
          sink.write(batch);
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
      }
      return {
        format: EXPORT_FORMAT,
        version: EXPORT_VERSION,
        schema,
        subject: subjectId,
        ownerKeyId: owner,
        chain,
        withVectors,
      } as const;
    }),
  );
  return {
    subject: subjectId,
    path: written.path,
    manifest: written.manifest,
    bytes: written.bytes,
  };
}
