/**
 * Transactions this engine committed that wrote nothing a trust view reads: a recorded turn, an
 * arrival's manifest. A kept trust view still holds when the only transactions that ended since
 * it was last confirmed are these (TrustVerifier), so an arrival after a turn, or after the last
 * arrival's manifest, does not scan the chain and the facts again.
 *
 * Only the module that ran the statement adds its xid, after it committed, and only for a
 * statement run on its own (autocommit, or the engine's own one-statement transaction), never
 * inside a caller's transaction. A process with the store cannot add to this set: its
 * transactions have their own xids, and any of them ending sends the next read to the full check.
 */
export class NeutralWrites {
  /** In the order they were added; the oldest go first past `capacity`. */
  private readonly xids = new Set<bigint>();
  /** The server run (TrustSql's `started`) the noted xids belong to, once one was named. */
  private server: string | null = null;

  /**
   * The server run the reads see now. Another than the last one named forgets every xid noted
   * before: after a crash restart or a failover the same ids may name other transactions.
   */
  run(server: string): void {
    if (server === this.server) return;
    this.xids.clear();
    this.server = server;
  }

  constructor(private readonly capacity = 4096) {}

  /** Notes a committed neutral transaction by its xid (pg_current_xact_id() as text). */
  add(xid: string | null | undefined): void {
    const x = parseXid(xid ?? '');
    if (x === null) return;
    this.xids.add(x);
    if (this.xids.size > this.capacity) {
      const oldest = this.xids.values().next();
      if (oldest.done !== true) this.xids.delete(oldest.value);
    }
  }

  /**
   * Whether every transaction that ended between snapshot `earlier` and snapshot `later` (texts
   * of pg_current_snapshot() on one run of one server, `server`) is one of these: then nothing a
   * trust view reads was written between them. False whenever that cannot be shown (an unreadable
   * or earlier `later`, more than `maxEnded` transactions to look at, a server run other than
   * the last one named, which forgets every xid noted before: see `run`).
   */
  onlyThese(earlier: string, later: string, server: string, maxEnded = 1024): boolean {
    if (server !== this.server) {
      this.run(server);
      return false;
    }
    const a = parseSnapshot(earlier);
    const b = parseSnapshot(later);
    if (a === null || b === null) return false;
    const ended = endedBetween(a, b, maxEnded);
    return ended !== null && ended.every((x) => this.xids.has(x));
  }
}

/** A snapshot as pg_current_snapshot() prints it: 'xmin:xmax:xip,xip,…' (64-bit xids). */
export interface XactSnapshot {
  xmin: bigint;
  xmax: bigint;
  /** Transactions in progress when it was taken (each at least xmin, below xmax). */
  xip: ReadonlySet<bigint>;
}

function parseXid(text: string): bigint | null {
  return /^[0-9]{1,20}$/.test(text) ? BigInt(text) : null;
}

/** The snapshot a text names, or null when it is not one. */
export function parseSnapshot(text: string): XactSnapshot | null {
  const m = /^([0-9]{1,20}):([0-9]{1,20}):([0-9,]*)$/.exec(text);
  if (m === null) return null;
  const xmin = BigInt(m[1] as string);
  const xmax = BigInt(m[2] as string);
  const xip = new Set<bigint>();
  for (const part of (m[3] as string).split(',')) {
    if (part === '') continue;
    const x = parseXid(part);
    if (x === null || x < xmin || x >= xmax) return null;
    xip.add(x);
  }
  return xmin <= xmax ? { xmin, xmax, xip } : null;
}

/** Whether transaction `xid` had ended (committed or rolled back) when `s` was taken. */
export function endedBy(s: XactSnapshot, xid: bigint): boolean {
  return xid < s.xmin || (xid < s.xmax && !s.xip.has(xid));
}

/**
 * Whether every transaction that had ended when snapshot `earlier` was taken had ended when
 * snapshot `later` was (texts of pg_current_snapshot() on one server run): what `earlier` saw,
 * `later` saw too. False whenever that cannot be shown (an unreadable snapshot, a smaller xmax).
 */
export function sawEverything(later: string, earlier: string): boolean {
  const l = parseSnapshot(later);
  const e = parseSnapshot(earlier);
  if (l === null || e === null || e.xmax > l.xmax) return false;
  // an ended transaction of `earlier` is below its xmax, so below later's: ended there unless
  // `later` lists it as in progress
  for (const x of l.xip) if (endedBy(e, x)) return false;
  return true;
}

/**
 * The transactions that ended after `earlier` was taken and by the time `later` was, or null when
 * `later` is not as late (its xmin or xmax smaller) or more than `max` ids would have to be looked
 * at. (A transaction that had not started by `earlier` has an xid of at least earlier.xmax.)
 */
export function endedBetween(
  earlier: XactSnapshot,
  later: XactSnapshot,
  max: number,
): bigint[] | null {
  if (later.xmin < earlier.xmin || later.xmax < earlier.xmax) return null;
  if (later.xmax - earlier.xmax + BigInt(earlier.xip.size) > BigInt(max)) return null;
  const ended: bigint[] = [];
  for (const x of earlier.xip) if (endedBy(later, x)) ended.push(x);
  for (let x = earlier.xmax; x < later.xmax; x++) if (endedBy(later, x)) ended.push(x);
  return ended;
}
