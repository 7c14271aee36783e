import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EngineError } from '../domain/errors.js';

/**
 * An export or a backup as one file: its folder's files in a POSIX ustar archive (`tar xf` reads
 * it), for a download and for `--out F.tar`. Only what a folder of ours holds: regular files with
 * plain names, under one folder named like the archive. Written with fixed times and modes, so the
 * same folder gives the same bytes; read with every header's checksum checked and nothing written
 * outside the folder it is read into.
 */

const BLOCK = 512;
const NAME = /^[A-Za-z0-9_.-]{1,80}$/;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number): Buffer {
  const h = Buffer.alloc(BLOCK, 0);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100, 8, 'ascii');
  h.write(octal(0, 8), 108, 8, 'ascii');
  h.write(octal(0, 8), 116, 8, 'ascii');
  h.write(octal(size, 12), 124, 12, 'ascii');
  h.write(octal(0, 12), 136, 12, 'ascii');
  h.write('        ', 148, 8, 'ascii');
  h.write('0', 156, 1, 'ascii');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return h;
}

/** The folder `dir`'s files as a ustar archive under `top/`, in name order. */
export function packFolder(dir: string, top: string, tarPath: string): void {
  if (!NAME.test(top)) {
    throw new EngineError('INVALID_ARGUMENT', `not a folder name for an archive: ${top}`);
  }
  const parts: Buffer[] = [];
  for (const name of readdirSync(dir).sort()) {
    const data = readFileSync(join(dir, name));
    parts.push(header(`${top}/${name}`, data.length), data);
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad, 0));
  }
  parts.push(Buffer.alloc(2 * BLOCK, 0));
  writeFileSync(tarPath, Buffer.concat(parts), { mode: 0o600 });
}

/** Whether the bytes begin as a ustar archive does. */
export function isTar(bytes: Buffer): boolean {
  return bytes.length >= BLOCK && bytes.toString('ascii', 257, 262) === 'ustar';
}

/**
 * Writes the files of an archive made by `packFolder` into `into` (an existing empty folder):
 * EXPORT_UNREADABLE for anything else (a bad checksum, a link, a path, a name of another folder).
 */
export function unpackTar(bytes: Buffer, into: string): void {
  const refuse = (why: string): EngineError =>
    new EngineError('EXPORT_UNREADABLE', `the archive cannot be read: ${why}`);
  let at = 0;
  let top: string | null = null;
  for (;;) {
    if (at + BLOCK > bytes.length) throw refuse('it ends inside a header');
    const h = bytes.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) return;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    if (parseInt(h.toString('ascii', 148, 156).trim(), 8) !== sum)
      throw refuse('a header checksum is wrong');
    const type = h.toString('ascii', 156, 157);
    if (type !== '0' && type !== '\0') throw refuse('it holds something other than files');
    const name = h.toString('utf8', 0, 100).replace(/\0.*$/s, '');
    const prefix = h.toString('utf8', 345, 500).replace(/\0.*$/s, '');
    const slash = name.indexOf('/');
    const folder = name.slice(0, slash);
    const file = name.slice(slash + 1);
    if (
      prefix !== '' ||
      slash < 0 ||
      !NAME.test(folder) ||
      !NAME.test(file) ||
      file.startsWith('.')
    ) {
      throw refuse(`it holds a file outside one folder: ${JSON.stringify(name).slice(0, 120)}`);
    }
    if (top !== null && folder !== top) throw refuse('it holds more than one folder');
    top = folder;
    const size = parseInt(h.toString('ascii', 124, 136).replace(/\0.*$/s, '').trim(), 8);
    if (!Number.isSafeInteger(size) || size < 0 || at + BLOCK + size > bytes.length) {
      throw refuse(`${file} is cut short`);
    }
    try {
      writeFileSync(join(into, file), bytes.subarray(at + BLOCK, at + BLOCK + size), {
        flag: 'wx',
        mode: 0o600,
      });
    } catch {
      throw refuse(`it holds ${file} twice`);
    }
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
}
