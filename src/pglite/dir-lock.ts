/**
 * One writer per embedded data directory. PGlite has no lock of its own, and two processes on one
 * directory lose acknowledged writes, so every open takes this lock first.
 *
 * Why a protocol of our own and not `proper-lockfile`: its stale reclaim (4.1.2, the last release)
 * is `stat`, `rmdir`, `mkdir` in separate steps, so a delayed process can remove the lock another
 * one has just re-created and both go on (moxystudio/node-proper-lockfile#121, the same race as the
 * one this file used to have); it also calls a lock stale by mtime age, so a writer whose event
 * loop stalls past the threshold loses its lock while still writing. Here staleness is a fact (the
 * owner's pid is gone on this host) and every step that changes the lock file is one atomic call:
 *
 * - Create: the record is written and fsynced to a temp file, then `link()`ed to the lock path,
 *   which fails with EEXIST when a lock exists. A lock file is never seen half written by a reader.
 * - Stale takeover: the lock's exact instance (inode, size, mtime, bytes) is hashed into a key, and
 *   a takeover marker `<lock>.takeover-<key>` is claimed by this same protocol (so a marker left by
 *   a crashed taker is itself taken over). Only the marker's holder may replace that instance: it
 *   re-reads the lock, and only if it is still that instance `rename()`s its own record over it. A
 *   process that judged the lock stale earlier and wins the marker later finds a different instance
 *   and backs off, so a lock is never replaced twice or after it changed hands.
 * - Empty or corrupt lock (a crash between create and write by an older memledger, or a damaged
 *   file) names no live owner: once it has been so for `UNREADABLE_GRACE_MS` it is stale and taken
 *   over the same way; before that it is waited on, so a lock that is being written is not broken.
 * - Release removes the lock only while it carries our random nonce.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError } from '../domain/errors.js';

/** What a lock file records about the process that holds it. */
export interface LockOwner {
  pid: number;
  host: string;
  since: string;
  /** Random per acquisition; absent in locks written by older memledger versions. */
  nonce?: string;
  /** `host` when the holder serves the store to other processes (a store host). */
  role?: 'host';
}

/** How long an empty or unparseable lock file is given to become a lock naming its owner. */
export const UNREADABLE_GRACE_MS = 2_000;
const POLL_MS = 25;
/** Takeovers of takeovers only nest when a taker crashes mid-takeover; this bounds the chain. */
const MAX_MARKER_DEPTH = 4;

interface Seen {
  owner: LockOwner | null;
  /** Identifies this instance of the file: any rewrite or replacement changes it. */
  key: string;
  mtimeMs: number;
}

type Verdict = 'held' | 'foreign-host' | 'settling' | 'stale';

type Claim = { won: true } | { won: false; seen: Seen | null; verdict: Verdict | null };

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errno(err) === 'EPERM';
  }
}

function parseOwner(raw: string): LockOwner | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const p = parsed as Record<string, unknown>;
  // pid 0 or below would signal a process group in kill(); such a record names no owner
  if (typeof p.pid !== 'number' || !Number.isSafeInteger(p.pid) || p.pid <= 0) return null;
  if (typeof p.host !== 'string' || p.host === '') return null;
  const owner: LockOwner = { pid: p.pid, host: p.host, since: String(p.since ?? '') };
  if (typeof p.nonce === 'string') owner.nonce = p.nonce;
  if (p.role === 'host') owner.role = 'host';
  return owner;
}

/** Reads the lock file and the identity of the inode it was read from; null when there is none. */
function look(path: string): Seen | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if (errno(err) === 'ENOENT') return null;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    const raw = readFileSync(fd, 'utf8');
    const key = createHash('sha256')
      .update(`${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:`)
      .update(raw)
      .digest('hex')
      .slice(0, 24);
    return { owner: parseOwner(raw), key, mtimeMs: st.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

function writeTemp(path: string, text: string): string {
  const tmp = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/** Creates `path` holding `text` only if it does not exist; false when it does. */
function createExclusive(path: string, text: string): boolean {
  const tmp = writeTemp(path, text);
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    const code = errno(err);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
  } finally {
    unlinkSync(tmp);
  }
  // a file system without hard links: O_EXCL create, then write (readers give it the grace period)
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (err) {
    if (errno(err) === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

function replaceAtomically(path: string, text: string): void {
  const tmp = writeTemp(path, text);
  try {
    renameSync(tmp, path);
  } catch (err) {
    unlinkSync(tmp);
    throw err;
  }
}

function removeIfOurs(path: string, nonce: string): void {
  // no one replaces a lock whose owner is alive, so it cannot change hands between read and unlink
  if (look(path)?.owner?.nonce !== nonce) return;
  try {
    unlinkSync(path);
  } catch (err) {
    if (errno(err) !== 'ENOENT') throw err;
  }
}

function markerName(path: string, key: string): string {
  return `${path}.takeover-${key}`;
}

/** The takeover marker a process would claim to replace the lock now at `path` (for tests). */
export function takeoverMarkerFor(path: string): string | null {
  const seen = look(path);
  return seen === null ? null : markerName(path, seen.key);
}

class Claimer {
  private readonly firstSeen = new Map<string, number>();

  constructor(
    private readonly record: string,
    private readonly nonce: string,
    private readonly deadline: number,
  ) {}

  private judge(seen: Seen): Verdict {
    const { owner } = seen;
    if (owner === null) {
      const now = Date.now();
      const first = this.firstSeen.get(seen.key) ?? now;
      this.firstSeen.set(seen.key, first);
      const settled = now - seen.mtimeMs > UNREADABLE_GRACE_MS || now - first > UNREADABLE_GRACE_MS;
      return settled ? 'stale' : 'settling';
    }
    if (owner.host !== hostname()) return 'foreign-host';
    return alive(owner.pid) ? 'held' : 'stale';
  }

  async claim(path: string, depth: number): Promise<Claim> {
    for (;;) {
      if (createExclusive(path, this.record)) return { won: true };
      const seen = look(path);
      if (seen === null) continue; // released between our create and our read
      const verdict = this.judge(seen);
      const last: Claim = { won: false, seen, verdict };
      if (verdict === 'held' || verdict === 'foreign-host') return last;
      if (verdict === 'stale' && depth < MAX_MARKER_DEPTH) {
        const marker = markerName(path, seen.key);
        const m = await this.claim(marker, depth + 1);
        if (m.won) {
          try {
            if (look(path)?.key === seen.key) {
              replaceAtomically(path, this.record);
              return { won: true };
            }
          } finally {
            removeIfOurs(marker, this.nonce);
          }
          continue; // it changed hands meanwhile: judge the new instance
        }
      }
      // settling, a takeover by a live process in progress, or a stuck takeover chain
      if (Date.now() > this.deadline) return last;
      await sleep(POLL_MS);
    }
  }
}

function holderText(owner: LockOwner): string {
  const since = owner.since === '' ? '' : ` since ${owner.since}`;
  return `process ${owner.pid} on ${owner.host}${since}`;
}

function lockedError(dir: string, lockFile: string, claim: Claim): EngineError {
  const seen = claim.won ? null : claim.seen;
  const verdict = claim.won ? null : claim.verdict;
  const owner = seen?.owner ?? null;
  const clear = `delete ${lockFile}`;
  let message: string;
  if (owner === null) {
    message =
      `the store at ${dir} is locked by ${lockFile}, which names no owner (empty or unreadable) ` +
      `and could not be taken over; once sure no memledger process uses this store, ${clear}`;
  } else if (verdict === 'foreign-host') {
    message =
      `the store at ${dir} is in use by ${holderText(owner)}, another host, so whether it still runs ` +
      `cannot be checked from here; once sure it has stopped, ${clear}`;
  } else if (verdict === 'held') {
    const self = owner.pid === process.pid ? ' (this process: close the other engine first)' : '';
    message =
      `the store at ${dir} is in use by ${holderText(owner)}${self}; stop that process, or if ` +
      `process ${owner.pid} is not memledger (its pid was reused), ${clear}`;
  } else {
    message =
      `the store at ${dir} is locked by ${holderText(owner)}, which is not running, but the lock ` +
      `could not be taken over; once sure no memledger process uses this store, ${clear}`;
  }
  const data: Record<string, unknown> = { lockFile };
  if (owner !== null) Object.assign(data, { pid: owner.pid, host: owner.host, since: owner.since });
  if (owner?.role === 'host') data.role = 'host';
  return new EngineError('STORE_LOCKED', message, { data });
}

/** The lock on one embedded data directory, held by this process until `release()`. */
export class DirLock {
  private constructor(
    private readonly path: string,
    readonly owner: LockOwner & { nonce: string },
  ) {}

  /** Takes the lock at `path` for the store `dir`, or throws STORE_LOCKED naming the holder. */
  static async acquire(path: string, dir: string, role?: 'host'): Promise<DirLock> {
    const owner = {
      pid: process.pid,
      host: hostname(),
      since: new Date().toISOString(),
      nonce: randomBytes(16).toString('hex'),
      ...(role === undefined ? {} : { role }),
    };
    const record = JSON.stringify(owner) + '\n';
    const claimer = new Claimer(record, owner.nonce, Date.now() + UNREADABLE_GRACE_MS + 3_000);
    let claim: Claim;
    try {
      claim = await claimer.claim(path, 0);
    } catch (err) {
      throw new EngineError('DB_UNUSABLE', `cannot create the lock file in ${dir}`, {
        cause: err,
      });
    }
    if (!claim.won) throw lockedError(dir, path, claim);
    return new DirLock(path, owner);
  }

  release(): void {
    try {
      removeIfOurs(this.path, this.owner.nonce);
    } catch {
      // an unreadable lock directory at close: nothing of ours to remove that we can reach
    }
  }
}
