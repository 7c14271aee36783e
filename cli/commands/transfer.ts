import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_SUBJECT } from '../../src/domain/defaults.js';
import { EngineError } from '../../src/domain/errors.js';
import { shownInline } from '../../src/domain/shown-text.js';
import type { TransferProgress } from '../../src/index.js';
import { exportSubjectOf } from '../../src/faces.js';
import { anchorKeyFile, cliAnchor } from '../anchor.js';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { recordSignedHead } from '../head-file.js';
import { SUBJECT_OPTION } from '../options.js';

/** A progress line on stderr when it is a terminal (never inside --json output on stdout). */
function progress(ctx: CommandContext, verb: string): ((p: TransferProgress) => void) | undefined {
  if (!ctx.io.stderrIsTTY) return undefined;
  let last = 0;
  return (p) => {
    const now = Date.now();
    if (p.done !== p.total && now - last < 200) return;
    last = now;
    ctx.io.stderr(
      `\r${verb}: ${p.done}/${p.total} rows (${p.kind})\x1b[K${p.done === p.total ? '\n' : ''}`,
    );
  };
}

const withProgress = (
  p: ((p: TransferProgress) => void) | undefined,
): { onProgress?: (p: TransferProgress) => void } => (p === undefined ? {} : { onProgress: p });

const kb = (bytes: number): string =>
  bytes < 1024 * 1024
    ? `${(bytes / 1024).toFixed(1)} KiB`
    : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** `export`: one subject into a new folder (docs/EXPORT.md). */
export const exportCommand = defineCommand({
  path: ['export'],
  summary:
    'Writes everything of a subject into a new folder: JSON Lines per kind and a manifest of their digests.',
  options: {
    ...SUBJECT_OPTION,
    out: {
      kind: 'text',
      value: 'DIR',
      required: true,
      help: 'the folder to write (new, or empty)',
    },
    'with-vectors': { kind: 'flag', help: "also the turns' and facts' vectors" },
  },
  async run(ctx) {
    const done = await ctx.withEngine(false, (engine) =>
      engine.subjects.export(ctx.values.subject ?? DEFAULT_SUBJECT, ctx.values.out, {
        withVectors: ctx.values['with-vectors'],
        ...withProgress(progress(ctx, 'exporting')),
      }),
    );
    const rows = done.manifest.files.reduce((a, f) => a + f.rows, 0);
    ctx.print(
      { path: done.path, bytes: done.bytes, manifest: done.manifest },
      () =>
        `exported subject ${shownInline(done.subject)} to ${done.path}: ${rows} rows in ${done.manifest.files.length} files, ${kb(done.bytes)}; decision chain of ${done.manifest.chain.length} links`,
    );
  },
});

/** `import`: an export folder into a new or empty subject of this store. */
export const importCommand = defineCommand({
  path: ['import'],
  summary: 'Imports an export into this store after checking its digests and its signed chain.',
  positionals: ['<folder>'],
  options: { ...SUBJECT_OPTION },
  async run(ctx) {
    const [folder] = ctx.positionals;
    if (folder === undefined) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        'name the export folder: memledger import <folder>',
        {
          data: { field: 'folder' },
        },
      );
    }
    // the export's subject is checked against its owner's key file, as a read of it would be
    const subject = ctx.values.subject ?? exportSubjectOf(folder) ?? DEFAULT_SUBJECT;
    const values = { ...ctx.values, subject };
    const keyFile = anchorKeyFile({ io: ctx.io, values }, subject);
    const { done, storeId } = await ctx.withEngine(
      true,
      async (engine) => ({
        // the subject the key file was chosen for: an export that names another is refused
        done: await engine.subjects.import(folder, {
          subject,
          ...withProgress(progress(ctx, 'importing')),
        }),
        storeId: engine.storeId,
      }),
      { anchor: cliAnchor({ io: ctx.io, values }) },
    );
    const { chain } = done;
    if (keyFile !== null && chain.length > 0 && chain.head !== null && chain.root !== null) {
      recordSignedHead(
        ctx,
        keyFile.path,
        { id: done.subject, storeId },
        {
          seq: chain.length,
          hash: chain.head,
          root: chain.root,
        },
      );
    }
    const checked =
      keyFile === null
        ? `no owner key file for ${shownInline(done.subject)} here: its chain was checked against the key the export carries; keep the owner's key file (memledger chain verify --key F checks it)`
        : `its chain was checked against the owner's key file ${keyFile.path}`;
    const rows = Object.values(done.rows).reduce((a, b) => a + b, 0);
    ctx.print(
      { ...done, anchored: keyFile !== null },
      () =>
        `imported subject ${shownInline(done.subject)}: ${rows} rows (${done.rows.sessions ?? 0} sessions, ${done.rows.turns ?? 0} turns, ${done.rows.facts ?? 0} facts, ${chain.length} decisions); ${checked}`,
    );
  },
});

/** `backup`: the whole store into a new folder, while other processes use it. */
export const backupCommand = defineCommand({
  path: ['backup'],
  summary: 'Writes a backup of the whole store into a new folder, while other processes use it.',
  options: {
    out: {
      kind: 'text',
      value: 'DIR',
      required: true,
      help: 'the folder to write (new, or empty)',
    },
  },
  async run(ctx) {
    const done = await ctx.withEngine(false, (engine) =>
      engine.backup(ctx.values.out, withProgress(progress(ctx, 'backing up'))),
    );
    const rows = done.manifest.files.reduce((a, f) => a + f.rows, 0);
    ctx.print(
      { path: done.path, bytes: done.bytes, manifest: done.manifest },
      () =>
        `backed up store ${done.manifest.storeId} to ${done.path}: ${rows} rows, ${kb(done.bytes)} (restore it with \`memledger restore ${done.path} --db NEW\`)`,
    );
  },
});

/** `restore`: a backup into the new store --db names. */
export const restoreCommand = defineCommand({
  path: ['restore'],
  summary: 'Restores a backup into a new store (--db), checking its digests and every chain.',
  positionals: ['<folder>'],
  options: {},
  async run(ctx) {
    const [folder] = ctx.positionals;
    if (folder === undefined) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        'name the backup folder: memledger restore <folder>',
        {
          data: { field: 'folder' },
        },
      );
    }
    const { restoreBackup } = await import('../../src/index.js');
    const done = await restoreBackup({
      from: folder,
      db: ctx.db,
      anchor: cliAnchor({ io: ctx.io, values: {} }),
      ...withProgress(progress(ctx, 'restoring')),
    });
    ctx.print(
      done,
      () =>
        `restored store ${done.storeId} into ${ctx.db}: ${done.subjects.length} subject(s) (${done.subjects.map(shownInline).join(', ')}), every chain verified`,
    );
  },
});

/** `move`: every subject of this store into a new store, the source left as it was. */
export const moveCommand = defineCommand({
  path: ['move'],
  summary: 'Copies the whole store into a new one (--to): a directory or a PostgreSQL database.',
  options: {
    to: {
      kind: 'text',
      value: 'DIR|postgres://…',
      required: true,
      help: 'the new store (a directory that does not exist yet, or an unused database)',
    },
  },
  async run(ctx) {
    const to = ctx.values.to;
    const same = (a: string): string => (a.startsWith('postgres') ? a : resolve(a));
    if (same(to) === same(ctx.db)) {
      throw new EngineError('INVALID_ARGUMENT', '--to names the store the move reads', {
        data: { field: 'to' },
      });
    }
    const { restoreBackup } = await import('../../src/index.js');
    const work = mkdtempSync(join(tmpdir(), 'memledger-move-'));
    try {
      const backup = await ctx.withEngine(false, (engine) =>
        engine.backup(join(work, 'backup'), withProgress(progress(ctx, 'reading'))),
      );
      const done = await restoreBackup({
        from: backup.path,
        db: to,
        anchor: cliAnchor({ io: ctx.io, values: {} }),
        ...withProgress(progress(ctx, 'writing')),
      });
      ctx.print({ ...done, from: ctx.db, to, bytes: backup.bytes }, () =>
        [
          `moved store ${done.storeId} to ${to}: ${done.subjects.length} subject(s) (${done.subjects.map(shownInline).join(', ')}), every chain verified`,
          `the source ${ctx.db} is left as it was: point memledger at the new store (--db or MEMLEDGER_DB) and stop using the old one, which keeps the same store id`,
        ].join('\n'),
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
});
