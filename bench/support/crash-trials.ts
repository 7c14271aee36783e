import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchKind } from '../../eval/bench-store.js';
import { generateOwnerKey, readOwnerPublicKey } from '../../src/index.js';
import { BenchError } from './bench-error.js';
import { ackKey, type Ack } from './crash-acks.js';
import { lostAcks } from './crash-check.js';
import { childFailure, runChild, type ChildRun } from './crash-child.js';
import { createStore, newLocation, reopen, type StoreLocation } from './crash-stores.js';
import { between } from './seeded-random.js';

export const WORKLOADS = ['turns', 'propose', 'decide', 'init'] as const;
export type Workload = (typeof WORKLOADS)[number];

const WRITER = fileURLToPath(new URL('../crash-writer.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../cli/main.js', import.meta.url));
/** The kill is timed from the first write of the workload's own kind. */
const ARM_ON = { turns: 'turn', propose: 'proposal', decide: 'decision' } as const;
/** A child that has neither been killed nor finished by then is stopped and reported. */
const CHILD_TIMEOUT_MS = 120_000;

/** The figures of one workload on one engine. */
export interface Tally {
  trials: number;
  /** Trials whose SIGKILL reached a running child (an `init` may finish before its kill). */
  killedMidRun: number;
  acknowledgedWrites: number;
  acknowledgedWritesLost: number;
  storesFailedToReopen: number;
  chainsFailedToVerify: number;
  /** Children that stopped by themselves (an error, or a timeout): a bench problem. */
  writerFailures: number;
  /** What each kill interrupted: the operation begun and not acknowledged, or `between`. */
  interrupted: Record<string, number>;
}

export function emptyTally(): Tally {
  return {
    trials: 0,
    killedMidRun: 0,
    acknowledgedWrites: 0,
    acknowledgedWritesLost: 0,
    storesFailedToReopen: 0,
    chainsFailedToVerify: 0,
    writerFailures: 0,
    interrupted: {},
  };
}

export interface Failure {
  engine: BenchKind;
  workload: Workload;
  trial: number;
  what: 'lost' | 'reopen' | 'chain' | 'writer';
  detail: string;
  store: string;
}

/** A store one workload keeps writing to, trial after trial, and every write it acknowledged. */
interface LiveStore {
  loc: StoreLocation;
  acks: Ack[];
  lost: Set<string>;
}

/** One engine's run: its stores, key, kill moments and figures. */
export class EngineRun {
  readonly tallies: Record<Workload, Tally> = {
    turns: emptyTally(),
    propose: emptyTally(),
    decide: emptyTally(),
    init: emptyTally(),
  };
  readonly failures: Failure[] = [];
  private readonly stores = new Map<Workload, LiveStore>();
  private made = 0;

  constructor(
    readonly kind: BenchKind,
    private readonly root: string,
    private readonly key: { path: string; passFile: string; keyId: string; publicKeyPem: string },
    private readonly random: () => number,
    private readonly killMs: { min: number; max: number },
    readonly initKillMs: { min: number; max: number },
    /** Keep every store and key file (--keep); else each is removed once it is done with. */
    private readonly keep: boolean,
  ) {}

  private fail(w: Workload, trial: number, what: Failure['what'], detail: string, store: string) {
    this.failures.push({ engine: this.kind, workload: w, trial, what, detail, store });
  }

  private ownerKey() {
    return { keyId: this.key.keyId, publicKeyPem: this.key.publicKeyPem };
  }

  private async liveStore(w: Workload): Promise<LiveStore> {
    let store = this.stores.get(w);
    if (store === undefined) {
      const loc = newLocation(this.kind, this.root, `${this.kind}-${w}-${++this.made}`);
      await createStore(loc, this.ownerKey());
      store = { loc, acks: [], lost: new Set() };
      this.stores.set(w, store);
    }
    return store;
  }

  /** A store that failed is put aside (removed, unless --keep) and the workload starts afresh. */
  private async retire(w: Workload, store: LiveStore): Promise<void> {
    this.stores.delete(w);
    await this.done(store.loc);
  }

  private async done(loc: StoreLocation, keyFile?: string): Promise<void> {
    if (this.keep) return;
    await loc.cleanup();
    if (keyFile !== undefined) rmSync(keyFile, { force: true });
  }

  /** One writer killed at a random moment among its writes, then the store checked. */
  async writerTrial(w: Exclude<Workload, 'init'>, trial: number): Promise<void> {
    const t = this.tallies[w];
    const store = await this.liveStore(w);
    const delay = between(this.random, this.killMs.min, this.killMs.max);
    const run = await runChild(
      [
        WRITER,
        ...['--db', store.loc.db, '--workload', w, '--tag', `${this.kind}-${trial}`],
        ...['--key', this.key.path, '--passphrase-file', this.key.passFile],
      ],
      { afterFirstAckMs: delay, armOn: ARM_ON[w] },
      CHILD_TIMEOUT_MS,
    );
    t.trials++;
    store.acks.push(...run.acks);
    t.acknowledgedWrites += run.acks.length;
    this.countKill(t, run, w, trial, store.loc.label);

    const checked = await reopen(store.loc, async (engine) => ({
      lost: await lostAcks(engine, store.acks),
      chain: await engine.subject().owner.verifyChain({ ownerKey: this.ownerKey() }),
    }));
    if (!checked.ok) {
      // Nothing in a store that does not open can be read back: every write it held is lost.
      const unread = store.acks.filter((a) => !store.lost.has(ackKey(a))).length;
      t.storesFailedToReopen++;
      t.acknowledgedWritesLost += unread;
      this.fail(
        w,
        trial,
        'reopen',
        `${checked.error} (${unread} acknowledged writes in it)`,
        store.loc.label,
      );
      await this.retire(w, store);
      return;
    }
    for (const l of checked.value.lost) {
      if (store.lost.has(l.key)) continue;
      store.lost.add(l.key);
      t.acknowledgedWritesLost++;
      this.fail(w, trial, 'lost', `${l.key}: ${l.why}`, store.loc.label);
    }
    const chain = checked.value.chain;
    if (!chain.ok) {
      t.chainsFailedToVerify++;
      this.fail(
        w,
        trial,
        'chain',
        `${chain.code} at link ${chain.brokenAt}: ${chain.reason}`,
        store.loc.label,
      );
      await this.retire(w, store);
    }
  }

  private countKill(t: Tally, run: ChildRun, w: Workload, trial: number, label: string): void {
    if (run.killed && run.error === null) {
      t.killedMidRun++;
      const op = run.inFlight ?? 'between';
      t.interrupted[op] = (t.interrupted[op] ?? 0) + 1;
    } else {
      // A writer never stops by itself: an error, or a kill that found it already gone.
      t.writerFailures++;
      this.fail(w, trial, 'writer', childFailure(run), label);
    }
  }

  /**
   * The real CLI `init` killed at a random moment of its run. An init that printed its result is
   * an acknowledged write: the store must then hold the subject and its key. Whatever the kill
   * left, `init` run again must succeed, and the store must open and its chain verify against
   * the key file.
   */
  async initTrial(trial: number): Promise<void> {
    const t = this.tallies.init;
    const loc = newLocation(this.kind, this.root, `${this.kind}-init-${trial}`);
    const keyPath = join(this.root, `${this.kind}-init-${trial}.key`);
    const args = initArgs(loc.db, keyPath, this.key.passFile);
    const delay = between(this.random, this.initKillMs.min, this.initKillMs.max);
    const run = await runChild(args, { afterStartMs: delay }, CHILD_TIMEOUT_MS);
    t.trials++;
    const acked = initResult(run) !== null;
    if (run.killed) {
      t.killedMidRun++;
      t.interrupted.init = (t.interrupted.init ?? 0) + 1;
    } else if (run.exitCode !== 0) {
      t.writerFailures++;
      this.fail('init', trial, 'writer', cliFailure(run), loc.label);
    }
    let reopenFailed = false;
    const failReopen = (detail: string): void => {
      if (!reopenFailed) t.storesFailedToReopen++;
      reopenFailed = true;
      this.fail('init', trial, 'reopen', detail, loc.label);
    };
    if (acked) {
      t.acknowledgedWrites++;
      const held = await reopen(loc, async (engine) => {
        const subjects = await engine.subjects.list();
        const key = subjects.includes('owner') ? await engine.subject().owner.key() : null;
        return { subjects, keyId: key?.keyId ?? null };
      });
      const fileKey = readKeyId(keyPath);
      if (!held.ok) {
        t.acknowledgedWritesLost++;
        failReopen(`after an acknowledged init: ${held.error}`);
      } else if (held.value.keyId === null || held.value.keyId !== fileKey) {
        t.acknowledgedWritesLost++;
        this.fail(
          'init',
          trial,
          'lost',
          `acknowledged init: subjects [${held.value.subjects.join(', ')}], store key ${held.value.keyId ?? 'none'}, key file ${fileKey ?? 'unreadable'}`,
          loc.label,
        );
      }
    }
    const again = await runChild(args, null, CHILD_TIMEOUT_MS);
    if (again.exitCode !== 0) {
      failReopen(`init run again after the kill: ${cliFailure(again)}`);
    } else {
      const checked = await reopen(loc, async (engine) => {
        const ownerKey = readOwnerPublicKey(keyPath);
        const stored = await engine.subject().owner.key();
        return {
          keyHeld: stored?.keyId === ownerKey.keyId,
          chain: await engine.subject().owner.verifyChain({ ownerKey }),
        };
      });
      if (!checked.ok) failReopen(`after init ran again: ${checked.error}`);
      else if (!checked.value.keyHeld)
        failReopen('init ran again, but the store does not hold the key file’s owner key');
      else if (!checked.value.chain.ok) {
        t.chainsFailedToVerify++;
        const c = checked.value.chain;
        this.fail(
          'init',
          trial,
          'chain',
          `${c.code} at link ${c.brokenAt}: ${c.reason}`,
          loc.label,
        );
      }
    }
    await this.done(loc, keyPath);
  }

  /**
   * Negative controls, on a store the writers used: acknowledgements of writes the store never
   * got (a turn past the session's end, an unknown proposal, a decision past the chain's head)
   * must each be reported lost, and the chain checked against another owner key must fail. A
   * check that cannot see these would report 0 for any run, so the bench stops instead.
   */
  async controls(): Promise<string> {
    const store = [...this.stores.values()].find((s) => s.acks.some((a) => a.kind === 'decision'));
    if (store === undefined) return 'not run (no store holds a decision)';
    const turn = store.acks.find((a) => a.kind === 'turn');
    const decision = store.acks.find((a) => a.kind === 'decision');
    if (turn?.kind !== 'turn' || decision?.kind !== 'decision')
      return 'not run (no turn or decision)';
    const forged: Ack[] = [
      { ...turn, seq: turn.seq + 100_000 },
      { kind: 'proposal', id: 'never-proposed', text: 'nothing' },
      { ...decision, seq: decision.seq + 100_000 },
    ];
    const other = generateOwnerKey('crash-bench control');
    const checked = await reopen(store.loc, async (engine) => ({
      lost: await lostAcks(engine, [...store.acks, ...forged]),
      chain: await engine.subject().owner.verifyChain({
        ownerKey: { keyId: other.keyId, publicKeyPem: other.publicKeyPem },
      }),
    }));
    if (!checked.ok) throw new BenchError(`controls: the store did not open: ${checked.error}`);
    const keys = new Set(checked.value.lost.map((l) => l.key));
    const unseen = forged.filter((a) => !keys.has(ackKey(a)));
    if (unseen.length > 0)
      throw new BenchError(
        `controls: forged acks not reported lost: ${unseen.map(ackKey).join(', ')}`,
      );
    if (checked.value.chain.ok)
      throw new BenchError('controls: the chain verified against a foreign owner key');
    return `${forged.length} forged acknowledgements reported lost; chain checked against a foreign key: ${checked.value.chain.code}`;
  }

  /** Drops the schemas and removes the directories still in use (unless --keep). */
  async cleanup(): Promise<void> {
    for (const s of this.stores.values()) await this.done(s.loc);
    this.stores.clear();
  }

  /** The figures over every workload. */
  total(): Tally {
    const sum = emptyTally();
    for (const t of Object.values(this.tallies)) {
      sum.trials += t.trials;
      sum.killedMidRun += t.killedMidRun;
      sum.acknowledgedWrites += t.acknowledgedWrites;
      sum.acknowledgedWritesLost += t.acknowledgedWritesLost;
      sum.storesFailedToReopen += t.storesFailedToReopen;
      sum.chainsFailedToVerify += t.chainsFailedToVerify;
      sum.writerFailures += t.writerFailures;
      for (const [op, n] of Object.entries(t.interrupted))
        sum.interrupted[op] = (sum.interrupted[op] ?? 0) + n;
    }
    return sum;
  }
}

/** `memledger init` on a store and key file of its own, the passphrase from a file. */
export function initArgs(db: string, keyPath: string, passFile: string): string[] {
  return [CLI, 'init', '--db', db, '--key', keyPath, '--passphrase-file', passFile, '--json'];
}

/** The JSON document `init --json` printed on success, or null when it printed none. */
export function initResult(run: ChildRun): { created: boolean } | null {
  try {
    const doc = JSON.parse(run.stdout) as { created?: unknown };
    return typeof doc.created === 'boolean' ? { created: doc.created } : null;
  } catch {
    return null;
  }
}

/** The CLI's `{"error":{code,message}}` on stderr as `CODE: message`, or how it stopped. */
export function cliFailure(run: ChildRun): string {
  try {
    const doc = JSON.parse(run.stderr) as { error?: { code?: string; message?: string } };
    if (doc.error !== undefined) return `${doc.error.code ?? '?'}: ${doc.error.message ?? ''}`;
  } catch {
    // not the CLI's error document
  }
  return childFailure(run);
}

function readKeyId(path: string): string | null {
  try {
    return readOwnerPublicKey(path).keyId;
  } catch {
    return null;
  }
}
