import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { EngineError } from '../domain/errors.js';
import { MANIFEST_FILE, type ManifestFile } from '../domain/export-format.js';
import { isTar, packFolder, unpackTar } from './tar.js';

/**
 * The folder an export or a backup is (docs/EXPORT.md): one JSON Lines file per kind, written with
 * its SHA-256 as it goes, and `manifest.json` last. It is written beside its place and renamed into
 * it once whole, so the place never holds a partial one; a reader checks every file's bytes against
 * the manifest before it parses a line.
 */

/** Progress of a long export, import, backup or restore: rows done of all rows, and the kind. */
export interface TransferProgress {
  kind: string;
  done: number;
  total: number;
}

/** A place a folder may be written: absent (its parent present), or an empty folder. */
function requireFreeFolder(path: string): void {
  const refuse = (why: string): EngineError =>
    new EngineError('INVALID_ARGUMENT', why, { data: { field: 'out' } });
  if (!existsSync(path)) {
    if (!existsSync(dirname(path))) throw refuse(`the folder ${dirname(path)} does not exist`);
    return;
  }
  let entries: string[];
  try {
    entries = readdirSync(path);
  } catch {
    throw refuse(`${path} exists and is not a folder`);
  }
  if (entries.length > 0) {
    throw refuse(`${path} is not empty: this is written into a new folder, never over another`);
  }
}

/** Where a writer puts one kind's lines. */
export interface KindSink {
  write(lines: readonly string[]): void;
}

/**
 * Writes a folder at `out`: `fill` writes each kind through `kind(name, columns)` (in the order it
 * calls it) and returns the manifest without its `files`, which this adds. Returns the manifest
 * and the bytes written.
 */
export async function writeFolder<M extends object>(
  out: string,
  fill: (kind: (name: string, columns: string[]) => KindSink) => Promise<M>,
): Promise<{ path: string; manifest: M & { files: ManifestFile[] }; bytes: number }> {
  const path = resolve(out);
  // `F.tar`: the folder written beside it, then packed into one file
  const tar = path.endsWith('.tar');
  if (tar) {
    if (existsSync(path)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `${path} exists: an archive is never written over`,
        {
          data: { field: 'out' },
        },
      );
    }
    const folder = `${path}.folder-${process.pid}`;
    rmSync(folder, { recursive: true, force: true });
    try {
      const written = await writeFolder(folder, fill);
      // the folder inside is named like the archive (`tar xf carol.tar` gives carol/)
      const top =
        basename(path, '.tar')
          .replace(/[^A-Za-z0-9_.-]/g, '_')
          .slice(0, 80) || 'export';
      packFolder(folder, top, `${path}.partial-${process.pid}`);
      renameSync(`${path}.partial-${process.pid}`, path);
      return { ...written, path };
    } finally {
      rmSync(folder, { recursive: true, force: true });
      rmSync(`${path}.partial-${process.pid}`, { force: true });
    }
  }
  requireFreeFolder(path);
  const partial = `${path}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  const files: ManifestFile[] = [];
  const open: Array<() => void> = [];
  try {
    const head = await fill((name, columns) => {
      const file = `${name}.jsonl`;
      const fd = openSync(join(partial, file), 'wx', 0o600);
      const hash = createHash('sha256');
      const entry: ManifestFile = { kind: name, file, columns, rows: 0, bytes: 0, sha256: '' };
      files.push(entry);
      let closed = false;
      const close = (): void => {
        if (closed) return;
        closed = true;
        closeSync(fd);
        entry.sha256 = hash.digest('hex');
      };
      open.push(close);
      // each kind is written whole before the next: the one before is closed now
      for (const c of open.slice(0, -1)) c();
      return {
        write(lines) {
          if (lines.length === 0) return;
          const chunk = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
          writeSync(fd, chunk);
          hash.update(chunk);
          entry.bytes += chunk.length;
          entry.rows += lines.length;
        },
      };
    });
    for (const c of open) c();
    const manifest = { ...head, files };
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
    const bytes = files.reduce((a, f) => a + f.bytes, 0) + Buffer.byteLength(text, 'utf8');
    return { path, manifest, bytes };
  } catch (err) {
    for (const c of open) {
      try {
        c();
      } catch {
        // closing what is being removed
      }
    }
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
}

/** A folder's manifest text, and its files' bytes, each checked against the manifest. */
export interface FolderReader {
  dir: string;
  manifestText: string;
  /**
   * The text of a file the manifest lists: EXPORT_DIGEST_MISMATCH when its bytes are not the
   * manifest's; EXPORT_UNREADABLE when it is too large to hold as one string.
   */
  readText(file: ManifestFile): string;
  /** Removes what opening an archive unpacked. */
  close(): void;
}

function readFile(dir: string, name: string): Buffer {
  try {
    return tooLarge(name, () => readFileSync(join(dir, name)));
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw new EngineError('EXPORT_UNREADABLE', `the folder cannot be read: ${name} is missing`, {
      data: { file: name },
    });
  }
}

/**
 * Opens a folder written by `writeFolder`, or an archive of one (`F.tar`, unpacked into a
 * temporary folder that `close` removes): EXPORT_UNREADABLE when it is neither.
 */
export function openFolder(path: string): FolderReader {
  const given = resolve(path);
  let kind: 'dir' | 'file' | null = null;
  try {
    const st = statSync(given);
    kind = st.isDirectory() ? 'dir' : st.isFile() ? 'file' : null;
  } catch {
    // reported below
  }
  if (kind === null) {
    throw new EngineError('EXPORT_UNREADABLE', `the folder cannot be read: ${given} is not there`);
  }
  let dir = given;
  let unpacked: string | null = null;
  if (kind === 'file') {
    const bytes = tooLarge(basename(given), () => readFileSync(given));
    if (!isTar(bytes)) {
      throw new EngineError(
        'EXPORT_UNREADABLE',
        `the folder cannot be read: ${given} is neither a folder nor a tar archive of one`,
      );
    }
    unpacked = mkdtempSync(join(tmpdir(), 'memledger-unpacked-'));
    try {
      unpackTar(bytes, unpacked);
    } catch (err) {
      rmSync(unpacked, { recursive: true, force: true });
      throw err;
    }
    dir = unpacked;
  }
  const close = (): void => {
    if (unpacked !== null) rmSync(unpacked, { recursive: true, force: true });
  };
  let manifestText: string;
  try {
    manifestText = readFile(dir, MANIFEST_FILE).toString('utf8');
  } catch (err) {
    close();
    throw err;
  }
  return {
    dir,
    close,
    manifestText,
    readText(file) {
      const bytes = readFile(dir, file.file);
      const digest = createHash('sha256').update(bytes).digest('hex');
      if (digest !== file.sha256 || bytes.length !== file.bytes) {
        throw new EngineError(
          'EXPORT_DIGEST_MISMATCH',
          `${file.file} is not the file that was written: its SHA-256 (or its length) is not the manifest's; a byte of it changed`,
          { data: { file: file.file } },
        );
      }
      return tooLarge(file.file, () => bytes.toString('utf8'));
    },
  };
}

/**
 * An import holds each file (and an archive) whole while it checks it: past what Node holds at
 * once (a string of 512 MiB, a file of 2 GiB) it says so, as EXPORT_UNREADABLE.
 */
function tooLarge<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (
      code === 'ERR_STRING_TOO_LONG' ||
      code === 'ERR_FS_FILE_TOO_LARGE' ||
      err instanceof RangeError
    ) {
      throw new EngineError(
        'EXPORT_UNREADABLE',
        `${what} is too large to import at once (this memledger reads a file of up to 512 MiB of text, an archive of up to 2 GiB): import the folder, or export without --with-vectors`,
        { data: { file: what } },
      );
    }
    throw err;
  }
}

/**
 * The subject an export (a folder or its `.tar`) names in its manifest, or null when it names none
 * or cannot be read: the CLI chooses the owner key file an import is checked against by it, before
 * it opens the store. The import itself reads and checks the manifest again.
 */
export function exportSubjectOf(path: string): string | null {
  let folder: FolderReader;
  try {
    folder = openFolder(path);
  } catch {
    return null;
  }
  try {
    const m = JSON.parse(folder.manifestText) as { subject?: unknown };
    return typeof m.subject === 'string' ? m.subject : null;
  } catch {
    return null;
  } finally {
    folder.close();
  }
}
