import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../domain/errors.js';
import { fileVerdict, type FileObservation, type ProbeOutcome } from '../domain/probe.js';
import { errorOutcome, type ProbeInstrument } from './instruments.js';
import { resolveInRoots } from './path-sandbox.js';

/** Where the file instrument writes its control files, inside the first allowed root. */
export const FILE_CONTROL_DIR = '.memledger-probe-controls';
/** A `contains` probe reads at most this much; a larger file is an error, not a partial answer. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

function needle(): string {
  return `memledger-needle-${randomBytes(12).toString('hex')}`;
}

/** The built-in file instrument: explicit mode and `negate`, paths confined to the roots. */
export function createFileInstrument(): ProbeInstrument {
  return {
    name: 'file',
    kind: 'file',
    fingerprint: 'memledger:file:1',
    async run(spec, ctx): Promise<ProbeOutcome> {
      if (spec.kind !== 'file') return errorOutcome('INSTRUMENT_FAILED', 'not a file probe');
      const contains = spec.mode === 'contains';
      const asked = {
        mode: spec.mode,
        needle: contains ? (spec.needle ?? null) : null,
        negate: contains ? spec.negate === true : null,
      };
      const where = resolveInRoots(spec.path, ctx.roots, ctx.sourceFallback);
      if (!where.ok)
        return errorOutcome(where.errorCode, where.message, { path: spec.path, ...asked });
      const base = {
        path: where.rel,
        root: where.root,
        ...(where.fallbackFrom === undefined ? {} : { fallbackFrom: where.fallbackFrom }),
      };
      let seen: FileObservation = { exists: false };
      let sizeBytes: number | null = null;
      if (where.exists) {
        try {
          const info = await stat(where.real);
          sizeBytes = info.size;
          seen = { exists: true, content: null };
          if (contains && info.isFile()) {
            if (info.size > MAX_FILE_BYTES) {
              return errorOutcome('TOO_LARGE', `${where.rel} is over ${MAX_FILE_BYTES} bytes`, {
                ...base,
                sizeBytes,
                ...asked,
              });
            }
            seen = { exists: true, content: await readFile(where.real, 'utf8') };
          }
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
          return errorOutcome('UNREADABLE', `cannot read ${where.rel}: ${code}`, {
            ...base,
            ...asked,
          });
        }
      }
      const v = fileVerdict(spec, seen);
      const evidence = {
        ...base,
        exists: seen.exists,
        sizeBytes,
        ...asked,
        matchCount: v.matchCount,
      };
      if (v.verdict !== 'error') return { verdict: v.verdict, errorCode: null, evidence };
      const why =
        v.errorCode === 'FILE_NOT_FOUND'
          ? `${where.rel} does not exist, so whether it contains the needle cannot be checked`
          : `${where.rel} is not a readable file`;
      return errorOutcome(v.errorCode, why, evidence);
    },
    async controls(ctx) {
      const root = ctx.roots[0];
      if (root === undefined || !(await stat(root).catch(() => null))?.isDirectory()) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `the first allowed root ${root ?? '(none)'} is not a directory`,
        );
      }
      const dir = join(root, FILE_CONTROL_DIR);
      const name = `control-${randomBytes(8).toString('hex')}.txt`;
      const present = needle();
      await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      await writeFile(join(dir, name), `memledger probe control\n${present}\n`, { flag: 'wx' });
      const path = `${FILE_CONTROL_DIR}/${name}`;
      return {
        positive: { kind: 'file', path, mode: 'contains', needle: present, negate: false },
        negative: { kind: 'file', path, mode: 'contains', needle: needle(), negate: false },
        async cleanup() {
          await rm(join(dir, name), { force: true });
          // Another calibration may still be using the directory; leave it if it is not empty.
          await rmdir(dir).catch(() => undefined);
        },
      };
    },
  };
}
