import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { EngineError } from '../domain/errors.js';
import type { QueryResult, SqlClient, SqlExecutor } from '../store/sql-client.js';
import { DirLock } from './dir-lock.js';
import { SnapshotSet } from './pglite-snapshot.js';

/**
 * Marks a directory as a memledger store, so `--db` never adopts an unrelated directory. It is
 * written last, when the store is complete: a directory with it is a store, one without is not.
 */
const MARKER_FILE = 'memledger.json';
const MARKER_TEXT = JSON.stringify({ format: 1 }) + '\n';
const LOCK_FILE = 'memledger.lock';
const DATA_DIR = 'pgdata';

function executor(db: PGlite | Transaction): SqlExecutor {
  return {
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<T>> {
      const result = await db.query<T>(sql, params as unknown[]);
      return { rows: result.rows, columns: result.fields.map((f) => f.name) };
    },
    async exec(sql: string): Promise<void> {
      await db.exec(sql);
    },
  };
}

export interface PgliteOpenOptions {
  /** A directory path, or `memory://` for a store that lives only in this process. */
  location: string;
  /** Create the directory when it does not exist (only `init` and `demo` do). */
  create: boolean;
  /**
   * Runs on a store this call creates, before it is put at its path (the opener migrates it
   * here), so a directory that is a store is never one half made.
   */
  prepare?: (client: SqlClient) => Promise<unknown>;
  /**
   * A dump of a freshly migrated store (`PgliteClient.dump`): a store this call creates starts
   * from it instead of an empty database (`prepare` still runs, and finds nothing to do).
   */
  template?: Blob;
  /** The lock names its holder a store host, which clients wait for rather than give up on. */
  lockRole?: 'host';
}

/*
 * Making a store survives a crash at any point. A new directory is built beside its path, as
 * `<store>.init-<host>-<pid>-<random>`, and renamed into place once migrated and marked: before
 * the rename there is no store, after it a complete one. An existing empty directory (which may be
 * a mount point, so nothing can be renamed over it) is built in place, under the lock, with a
 * `memledger.init-<host>-<pid>-<random>` claim directory inside from the first step to the last,
 * and the marker written last. `<host>` is the first 8 hex digits of sha256(hostname), `<pid>` the
 * creator's: a later `init` removes what a creator left only once that creator is dead on this
 * host, so a store being made by a live process is never touched.
 */
const ASIDE_INFIX = '.init-';
const CLAIM_PREFIX = 'memledger.init-';
const HOST_TAG = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

interface Creator {
  host: string;
  pid: number;
}

function claimSuffix(): string {
  return `${HOST_TAG}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** The creator a temporary's or claim's name records, or null when `name` is not one. */
function creatorOf(name: string, prefix: string): Creator | null {
  if (!name.startsWith(prefix)) return null;
  const m = /^([0-9a-f]{8})-([1-9][0-9]{0,9})-[0-9a-f]{8}$/.exec(name.slice(prefix.length));
  return m === null ? null : { host: m[1] as string, pid: Number(m[2]) };
}

/** Dead on this host; a creator on another host cannot be checked, so it is never called dead. */
function isDead(creator: Creator): boolean {
  if (creator.host !== HOST_TAG) return false;
  try {
    process.kill(creator.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

/**
 * Test-only: `MEMLEDGER_TEST_CRASH_AT=<step>` SIGKILLs the process at that step of making a store,
 * so test/heavy/regressions/init-crash-bricked-the-store.test.ts can stop it exactly there. Steps:
 * pglite-aside-booted, pglite-aside-ready (migrated and marked, not renamed), pglite-in-place-booted,
 * pglite-in-place-ready (marked, claim not yet removed).
 */
function crashPoint(step: string): void {
  if (process.env.MEMLEDGER_TEST_CRASH_AT === step) process.kill(process.pid, 'SIGKILL');
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // a file system that cannot sync a directory: the rename is still atomic
  }
}

/** Writes `path` whole or not at all: a temp file, synced, renamed over it. */
function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.tmp-${claimSuffix()}`;
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  syncDir(dirname(path));
}

function notInitialized(dir: string, why = ''): EngineError {
  return new EngineError(
    'NOT_INITIALIZED',
    `no memledger store at ${dir}${why}; create one (createEngine with create: true, or \`memledger init\`)`,
  );
}

/** What an in-place build may leave behind: its data, the lock's files, the marker's temp, claims. */
function isLeftover(name: string): boolean {
  return (
    name === DATA_DIR ||
    name === LOCK_FILE ||
    name.startsWith(`${LOCK_FILE}.`) ||
    name.startsWith(`${MARKER_FILE}.tmp-`) ||
    creatorOf(name, CLAIM_PREFIX) !== null
  );
}

type Plan = 'open' | 'aside' | 'in-place';

/** Checks the directory before anything is written, so a bad `--db` changes nothing. */
function planDirectory(dir: string, create: boolean): Plan {
  if (!existsSync(dir)) {
    if (!create) throw notInitialized(dir);
    const parent = dirname(dir);
    if (!existsSync(parent) || !statSync(parent).isDirectory()) {
      throw new EngineError('DB_UNUSABLE', `cannot create ${dir}: ${parent} is not a directory`);
    }
    return 'aside';
  }
  if (!statSync(dir).isDirectory()) {
    throw new EngineError('DB_UNUSABLE', `${dir} is a file, not a store directory`);
  }
  if (existsSync(join(dir, MARKER_FILE))) return 'open';
  const names = readdirSync(dir);
  const claims = names.flatMap((n) => creatorOf(n, CLAIM_PREFIX) ?? []);
  // Data with no claim beside it is no build of ours (an earlier memledger's, or someone's store
  // whose marker went missing): never cleared.
  const unfinished = names.every(isLeftover) && (claims.length > 0 || !names.includes(DATA_DIR));
  if (!unfinished) {
    const earlier = names.includes(DATA_DIR) && names.every(isLeftover);
    throw new EngineError(
      'DB_UNUSABLE',
      `${dir} is a non-empty directory that is not a memledger store; choose another directory` +
        (earlier
          ? ` (it holds only ${names.join(', ')} and no ${MARKER_FILE}, as an \`init\` of an earlier memledger leaves it when interrupted; if nothing in it is needed, remove it and run init again)`
          : ''),
    );
  }
  const live = claims.find((c) => !isDead(c));
  if (live !== undefined) {
    const who = `process ${live.pid}${live.host === HOST_TAG ? '' : ' on another host'}`;
    if (!create) throw notInitialized(dir, ` (${who} is creating one there)`);
    throw new EngineError(
      'STORE_LOCKED',
      `the store at ${dir} is being created by ${who}; wait for it to finish`,
      { data: { pid: live.pid } },
    );
  }
  if (!create) {
    throw notInitialized(dir, names.length > 0 ? ' (an interrupted init left it unfinished)' : '');
  }
  return 'in-place';
}

/** Removes the directory at `path` if it holds nothing but `allowed` names (else it is not ours). */
function removeIfOnly(path: string, allowed: readonly string[]): void {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st === undefined || !st.isDirectory()) return;
  if (!readdirSync(path).every((n) => allowed.includes(n))) return;
  rmSync(path, { recursive: true, force: true });
}

/** Removes temporaries beside `dir` left by dead creators (each holds data and a marker only). */
function removeDeadTemporaries(dir: string): void {
  const parent = dirname(dir);
  const prefix = basename(dir) + ASIDE_INFIX;
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const creator = creatorOf(name, prefix);
    if (creator !== null && isDead(creator)) {
      removeIfOnly(join(parent, name), [DATA_DIR, MARKER_FILE]);
    }
  }
}

function unusable(dir: string, err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  return new EngineError('DB_UNUSABLE', `cannot create the embedded store at ${dir}`, {
    cause: err,
  });
}

type Prepare = NonNullable<PgliteOpenOptions['prepare']>;
type Template = PgliteOpenOptions['template'];
/** Makes the client over a booted database (the constructor is the class's own). */
type Wrap = (db: PGlite, location: string, lock: DirLock | null) => PgliteClient;

/** Builds a complete store beside `dir` and renames it into place. */
async function buildAside(
  dir: string,
  prepare: Prepare,
  wrap: Wrap,
  template: Template,
): Promise<void> {
  removeDeadTemporaries(dir);
  const temp = join(dirname(dir), basename(dir) + ASIDE_INFIX + claimSuffix());
  try {
    mkdirSync(temp);
  } catch (err) {
    throw new EngineError('DB_UNUSABLE', `cannot create ${dir}`, { cause: err });
  }
  try {
    const db = await boot(join(temp, DATA_DIR), template);
    try {
      crashPoint('pglite-aside-booted');
      await prepare(wrap(db, temp, null));
    } finally {
      await db.close();
    }
    writeAtomically(join(temp, MARKER_FILE), MARKER_TEXT);
    crashPoint('pglite-aside-ready');
    try {
      renameSync(temp, dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Another process put a store (or something else) there first: ours is not needed.
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
      rmSync(temp, { recursive: true, force: true });
      return;
    }
    syncDir(dirname(dir));
  } catch (err) {
    rmSync(temp, { recursive: true, force: true });
    throw unusable(dir, err);
  }
}

/** Builds a store inside the empty (or unfinished) directory `dir`, under its lock. */
async function buildInPlace(
  dir: string,
  prepare: Prepare,
  wrap: Wrap,
  template: Template,
  lockRole: PgliteOpenOptions['lockRole'],
): Promise<PgliteClient> {
  const claim = CLAIM_PREFIX + claimSuffix();
  try {
    mkdirSync(join(dir, claim));
  } catch (err) {
    throw new EngineError('DB_UNUSABLE', `cannot create a store in ${dir}`, { cause: err });
  }
  let lock: DirLock | null = null;
  let db: PGlite | null = null;
  try {
    lock = await DirLock.acquire(join(dir, LOCK_FILE), dir, lockRole);
    // Under the lock: clear what dead creators left (never the lock's own files), then build.
    for (const name of readdirSync(dir)) {
      if (name === claim || name === LOCK_FILE || name.startsWith(`${LOCK_FILE}.`)) continue;
      const creator = creatorOf(name, CLAIM_PREFIX);
      if (creator !== null && !isDead(creator)) continue; // it will find the lock taken
      if (!isLeftover(name)) {
        throw new EngineError('DB_UNUSABLE', `${dir} changed while a store was being made in it`);
      }
      rmSync(join(dir, name), { recursive: true, force: true });
    }
    db = await boot(join(dir, DATA_DIR), template);
    const client = wrap(db, dir, lock);
    crashPoint('pglite-in-place-booted');
    await prepare(client);
    writeAtomically(join(dir, MARKER_FILE), MARKER_TEXT);
    crashPoint('pglite-in-place-ready');
    rmSync(join(dir, claim), { recursive: true, force: true });
    return client;
  } catch (err) {
    await db?.close().catch(() => undefined);
    if (lock !== null && !existsSync(join(dir, MARKER_FILE))) {
      rmSync(join(dir, DATA_DIR), { recursive: true, force: true });
    }
    lock?.release();
    rmSync(join(dir, claim), { recursive: true, force: true });
    throw unusable(dir, err);
  }
}

/** Under the lock of a complete store: removes claims its dead creators left inside it. */
function removeDeadClaims(dir: string): void {
  for (const name of readdirSync(dir)) {
    const creator = creatorOf(name, CLAIM_PREFIX);
    if (creator !== null && isDead(creator)) removeIfOnly(join(dir, name), []);
  }
}

/**
 * PostgreSQL's shared buffers, smaller than PGlite's 128 MB: setting them up is a third of a
 * boot (0.95 against 0.64 s on the dev machine), and a boot is what a command pays when no store
 * host runs. Recall on a 100,000-turn store is about as fast with them (`npm run bench:recall`,
 * PGlite, one subject: p50 11.0 ms and p95 15.4 ms, against 9.9 and 16.0 ms with 128 MB).
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=32MB'];

/**
 * Starts PGlite with the pgvector extension it bundles, created in the store on first open; a new
 * store from `template` when one is given (no initdb: about a third of the time).
 */
async function boot(dataDir?: string, template?: Blob): Promise<PGlite> {
  const db = await PGlite.create({
    ...(dataDir === undefined ? {} : { dataDir }),
    ...(template === undefined ? {} : { loadDataDir: template }),
    extensions: { vector },
    startParams: START_PARAMS,
  });
  try {
    await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return db;
}

export class PgliteClient implements SqlClient {
  readonly kind = 'pglite' as const;
  readonly capabilities = {
    concurrentConnections: false,
    autovacuum: false,
    vectorType: true,
    roundTrips: false,
    stopsStatements: false,
  };
  private readonly root: SqlExecutor;
  private readonly snapshots: SnapshotSet;

  private constructor(
    private readonly db: PGlite,
    readonly location: string,
    private readonly lock: DirLock | null,
  ) {
    this.root = executor(db);
    this.snapshots = new SnapshotSet(location, this.capabilities);
  }

  static async open(options: PgliteOpenOptions): Promise<PgliteClient> {
    if (options.location === 'memory://') {
      return new PgliteClient(await boot(undefined, options.template), 'memory://', null);
    }
    const dir = resolve(options.location);
    const prepare = options.prepare ?? (async () => undefined);
    const wrap: Wrap = (db, at, lock) => new PgliteClient(db, at, lock);
    let plan = planDirectory(dir, options.create);
    if (plan === 'aside') {
      await buildAside(dir, prepare, wrap, options.template);
      // Ours is in place now, or the one another process put there first.
      plan = planDirectory(dir, options.create);
    }
    if (plan === 'in-place') {
      return buildInPlace(dir, prepare, wrap, options.template, options.lockRole);
    }
    if (plan !== 'open') {
      throw new EngineError('DB_UNUSABLE', `${dir} went away while its store was being created`);
    }
    const lock = await DirLock.acquire(join(dir, LOCK_FILE), dir, options.lockRole);
    try {
      // a host opens the store for every command, `init` included: it clears what dead creators left
      if (options.create || options.lockRole === 'host') removeDeadClaims(dir);
      const db = await boot(join(dir, DATA_DIR));
      return new PgliteClient(db, dir, lock);
    } catch (err) {
      lock.release();
      if (err instanceof EngineError) throw err;
      throw new EngineError('DB_UNUSABLE', `cannot open the embedded store at ${dir}`, {
        cause: err,
      });
    }
  }

  query<T = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<QueryResult<T>> {
    return this.root.query<T>(sql, params);
  }

  exec(sql: string): Promise<void> {
    return this.root.exec(sql);
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => fn(executor(tx)));
  }

  /** The data directory as an uncompressed tarball, to start new stores from (`template`). */
  async dump(): Promise<Blob> {
    return this.db.dumpDataDir('none');
  }

  /**
   * The store as it is now, booted from a dump of its data directory in a worker thread (what is
   * committed; a transaction still open is not in it). The dump holds this thread while it is
   * written, about 0.3 s for a new store's 40 MB; the boot does not.
   */
  async snapshot(): Promise<SqlClient> {
    return this.snapshots.add(await this.dump());
  }

  async close(): Promise<void> {
    try {
      await this.snapshots.closeAll();
      if (!this.db.closed) await this.db.close();
    } finally {
      this.lock?.release();
    }
  }
}
