import type { ExportKind } from '../domain/export-format.js';
import { EXPORT_KINDS } from '../domain/export-format.js';
import { BULK_INDEX_SQL } from './recall-index-sql.js';
import { guard } from './store-error.js';
import type { SqlExecutor } from './sql-client.js';

/**
 * A subject's rows as an export holds them, and back (docs/EXPORT.md). Each row is read as
 * PostgreSQL's `row_to_json` writes it and written back through `json_populate_recordset`, so
 * every type (times to the microsecond, arrays, JSON, vectors) passes through the database's own
 * text form and nothing of it is translated in between: both engines read and write it alike.
 * Table and column names come from `EXPORT_KINDS` and the store's own catalogue, never from a file.
 */

/** A name as SQL quotes it (catalogue names only: lower case, digits and underscores). */
const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The ordering of a kind's rows: text compared byte by byte, so both engines agree. */
function orderBy(kind: ExportKind, textColumns: ReadonlySet<string>): string {
  return kind.order
    .split(',')
    .map((c) => c.trim())
    .map((c) => (textColumns.has(c) ? `${q(c)} COLLATE "C"` : q(c)))
    .join(', ');
}

export class ExportSql {
  constructor(private readonly db: SqlExecutor) {}

  /** The schema version of the store: its newest migration. */
  schemaVersion(): Promise<number> {
    return guard('reading the schema version', async () => {
      const { rows } = await this.db.query<{ v: number }>(
        'SELECT max(version)::int AS v FROM schema_migrations',
      );
      return rows[0]?.v ?? 0;
    });
  }

  /** A kind's columns in this store, in table order, and which of them are text. */
  columns(kind: ExportKind): Promise<{ columns: string[]; text: Set<string> }> {
    return guard('reading the schema', async () => {
      const { rows } = await this.db.query<{ name: string; type: string }>(
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
        [kind.name],
      );
      const omit = new Set(kind.omit ?? []);
      return {
        columns: rows.map((r) => r.name).filter((c) => !omit.has(c)),
        text: new Set(rows.filter((r) => r.type === 'text').map((r) => r.name)),
      };
    });
  }

  /**
   * The subject's rows of a kind, as JSON text, in the kind's order, `batch` at a time (a cursor:
   * run inside a transaction, which keeps one snapshot across every kind).
   */
  async *rows(
    kind: ExportKind,
    columns: readonly string[],
    text: ReadonlySet<string>,
    subjectId: string,
    batch = 5000,
  ): AsyncGenerator<string[]> {
    const select = `SELECT row_to_json(x)::text AS j FROM (
        SELECT ${columns.map(q).join(', ')} FROM ${q(kind.name)}
        WHERE ${kind.where} ORDER BY ${orderBy(kind, text)}) x`;
    await guard('exporting', () =>
      this.db.query(`DECLARE memledger_export NO SCROLL CURSOR FOR ${select}`, [subjectId]),
    );
    try {
      for (;;) {
        const { rows } = await guard('exporting', () =>
          this.db.query<{ j: string }>(`FETCH ${batch} FROM memledger_export`),
        );
        if (rows.length > 0) yield rows.map((r) => r.j);
        if (rows.length < batch) break;
      }
    } finally {
      await guard('exporting', () => this.db.exec('CLOSE memledger_export'));
    }
  }

  /** How many rows of a kind the subject has. */
  count(kind: ExportKind, subjectId: string): Promise<number> {
    return guard('exporting', async () => {
      const { rows } = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${q(kind.name)} WHERE ${kind.where}`,
        [subjectId],
      );
      return rows[0]?.n ?? 0;
    });
  }

  /**
   * The kinds holding rows of the subject besides its own row and slots (what a new subject starts
   * with): an import writes only into a subject with none.
   */
  occupied(subjectId: string): Promise<string[]> {
    return guard('checking the subject is empty', async () => {
      const kinds = EXPORT_KINDS.filter(
        (k) => k.name !== 'subjects' && k.name !== 'slots' && k.shared !== true,
      );
      const { rows } = await this.db.query<{ kind: string }>(
        kinds
          .map(
            (k) =>
              `SELECT '${k.name}' AS kind WHERE EXISTS (SELECT 1 FROM ${q(k.name)} WHERE subject_id = $1)`,
          )
          .join(' UNION ALL '),
        [subjectId],
      );
      return rows.map((r) => r.kind);
    });
  }

  /** Removes a subject that holds nothing but its row and slots, for an import to replace. */
  clearEmpty(subjectId: string): Promise<void> {
    return guard('importing', async () => {
      await this.db.query('DELETE FROM slots WHERE subject_id = $1', [subjectId]);
      await this.db.query('DELETE FROM subjects WHERE id = $1', [subjectId]);
    });
  }

  /**
   * Readies the transaction for writing whole subjects: foreign keys checked at its commit (facts
   * and retractions cite each other), and turns indexed by `indexSubject` once written, not one by
   * one (migration 0023).
   */
  bulkMode(): Promise<void> {
    return guard('importing', async () => {
      await this.db.exec('SET CONSTRAINTS ALL DEFERRED');
      await this.db.exec(`SET LOCAL memledger.bulk_index = 'on'`);
    });
  }

  /** Makes a subject's recall index from its turns, written in bulk mode (it had none). */
  indexSubject(subjectId: string): Promise<void> {
    return guard('indexing the imported turns', async () => {
      for (const statement of BULK_INDEX_SQL) await this.db.query(statement, [subjectId]);
    });
  }

  /**
   * Writes rows of a kind: `columns` as given (the others take their defaults), `extra` columns
   * added to each row by the importer (analysed terms, the imported mark). A shared kind keeps a
   * row the store holds already.
   */
  insert(
    kind: ExportKind,
    columns: readonly string[],
    rows: readonly Record<string, unknown>[],
  ): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    const cols = columns.map(q).join(', ');
    return guard('importing', async () => {
      await this.db.query(
        `INSERT INTO ${q(kind.name)} (${cols}) OVERRIDING SYSTEM VALUE
         SELECT ${cols} FROM json_populate_recordset(NULL::${q(kind.name)}, $1::json)
         ${kind.shared === true ? 'ON CONFLICT DO NOTHING' : ''}`,
        [JSON.stringify(rows)],
      );
    });
  }

  /** Moves a kind's `seq` sequence past every row it holds, so new rows come after imported ones. */
  moveSequence(kind: ExportKind): Promise<void> {
    return guard('importing', async () => {
      await this.db.query(
        `SELECT setval(s, m) FROM (
           SELECT s, greatest(coalesce(pg_sequence_last_value(s), 0),
                              (SELECT coalesce(max(seq), 0) FROM ${q(kind.name)})) AS m
           FROM (SELECT pg_get_serial_sequence($1, 'seq')::regclass AS s) a) b
         WHERE m > 0`,
        [kind.name],
      );
    });
  }

  // A whole store, for a backup and its restore (the tables are BACKUP_TABLES, constants).

  /** Every column of a table, in table order. */
  tableColumns(table: string): Promise<string[]> {
    return guard('reading the schema', async () => {
      const { rows } = await this.db.query<{ name: string }>(
        `SELECT column_name AS name FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
        [table],
      );
      return rows.map((r) => r.name);
    });
  }

  /** How many rows a table holds. */
  countAll(table: string): Promise<number> {
    return guard('backing up', async () => {
      const { rows } = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${q(table)}`,
      );
      return rows[0]?.n ?? 0;
    });
  }

  /** Every row of a table as JSON text, in its primary key's order, `batch` at a time. */
  async *allRows(
    table: string,
    columns: readonly string[],
    batch = 5000,
  ): AsyncGenerator<string[]> {
    const { rows: key } = await guard('reading the schema', () =>
      this.db.query<{ name: string }>(
        `SELECT a.attname AS name FROM pg_index i
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey::int2[])
         WHERE i.indrelid = $1::regclass AND i.indisprimary
         ORDER BY array_position(i.indkey::int2[], a.attnum)`,
        [q(table)],
      ),
    );
    const order = key.length === 0 ? '' : `ORDER BY ${key.map((k) => q(k.name)).join(', ')}`;
    await guard('backing up', () =>
      this.db.exec(
        `DECLARE memledger_backup NO SCROLL CURSOR FOR SELECT row_to_json(x)::text AS j FROM (
           SELECT ${columns.map(q).join(', ')} FROM ${q(table)} ${order}) x`,
      ),
    );
    try {
      for (;;) {
        const { rows } = await guard('backing up', () =>
          this.db.query<{ j: string }>(`FETCH ${batch} FROM memledger_backup`),
        );
        if (rows.length > 0) yield rows.map((r) => r.j);
        if (rows.length < batch) break;
      }
    } finally {
      await guard('backing up', () => this.db.exec('CLOSE memledger_backup'));
    }
  }

  /** Whether the store was used: it has an identity or a subject. */
  used(): Promise<boolean> {
    return guard('checking the store is new', async () => {
      const { rows } = await this.db.query<{ used: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM store_meta) OR EXISTS (SELECT 1 FROM subjects) AS used`,
      );
      return rows[0]?.used === true;
    });
  }

  /** Empties the one-row analyzer record, for a restore to write the backup's. */
  clearRecallIndex(): Promise<void> {
    return guard('restoring', () => this.db.exec('DELETE FROM recall_index'));
  }

  /** Writes rows given as JSON text (a backup's lines) into a table, `columns` as given. */
  insertLines(table: string, columns: readonly string[], lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return Promise.resolve();
    const cols = columns.map(q).join(', ');
    return guard('restoring', async () => {
      await this.db.query(
        `INSERT INTO ${q(table)} (${cols}) OVERRIDING SYSTEM VALUE
         SELECT ${cols} FROM json_populate_recordset(NULL::${q(table)}, $1::json)`,
        [`[${lines.join(',')}]`],
      );
    });
  }

  /** Moves every identity sequence past the rows its table holds. */
  async moveSequences(): Promise<void> {
    for (const k of EXPORT_KINDS) {
      if (k.sequence === true || k.name === 'probe_calibrations') await this.moveSequence(k);
    }
  }
}
