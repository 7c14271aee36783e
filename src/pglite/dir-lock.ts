import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { EngineError } from '../domain/errors.js';

interface LockOwner {
  pid: number;
  host: string;
  since: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(path: string): LockOwner | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    if (typeof parsed.pid === 'number' && typeof parsed.host === 'string') {
      return { pid: parsed.pid, host: parsed.host, since: String(parsed.since ?? '') };
    }
    return null;
  } catch {
    return null;
  }
}

/**
 * PGlite has one writer and no lock of its own: two processes on one data directory corrupt it.
 * The lock file is created with O_EXCL; a lock left by a dead process on this host is taken over.
 */
export class DirLock {
  private constructor(private readonly path: string) {}

  static acquire(path: string, dir: string): DirLock {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o600);
        const owner: LockOwner = {
          pid: process.pid,
          host: hostname(),
          since: new Date().toISOString(),
        };
        writeSync(fd, JSON.stringify(owner));
        closeSync(fd);
        return new DirLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new EngineError('DB_UNUSABLE', `cannot create the lock file in ${dir}`, {
            cause: err,
          });
        }
      }
      const owner = readOwner(path);
      const stale = owner !== null && owner.host === hostname() && !alive(owner.pid);
      if (!stale) {
        const who = owner === null ? 'another process' : `process ${owner.pid} on ${owner.host}`;
        throw new EngineError('STORE_LOCKED', `the store at ${dir} is in use by ${who}`, {
          data: { lockFile: path, ...(owner === null ? {} : { pid: owner.pid }) },
        });
      }
      try {
        unlinkSync(path);
      } catch {
        // another process took it over first; the next attempt reports it
      }
    }
    throw new EngineError('STORE_LOCKED', `the store at ${dir} is in use by another process`);
  }

  release(): void {
    const owner = readOwner(this.path);
    if (owner !== null && owner.pid === process.pid && owner.host === hostname()) {
      try {
        unlinkSync(this.path);
      } catch {
        // already gone
      }
    }
  }
}
