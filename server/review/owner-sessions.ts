import { ServerError } from '../server-errors.js';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { EngineError, loadOwnerKey, type OwnerSigner } from '../../src/index.js';

/** How long an unlocked page keeps the owner key without a request from it (default 10 minutes). */
export const DEFAULT_IDLE_MS = 10 * 60_000;

/** How many sessions that unlocked (and may since have locked) the server remembers at most. */
const MAX_SESSIONS = 64;

/** The wait after the n-th wrong passphrase in a row: 1 s, 2 s, 4 s … at most 60 s. */
export function unlockDelayMs(failures: number, baseMs = 1_000): number {
  if (failures <= 0) return 0;
  return Math.min(baseMs * 2 ** (failures - 1), 60_000);
}

/** One browser's session with the review page. */
export interface OwnerSession {
  readonly id: string;
  /** Every form of this session carries it; a post without it changes nothing. */
  readonly csrf: string;
  /** Whether the owner key is open for this session now. */
  unlocked: boolean;
  /** A message for the next page this session sees (a redirect after a post). */
  flash: { kind: 'ok' | 'error'; text: string } | null;
}

interface SessionState extends OwnerSession {
  signer: OwnerSigner | null;
  timer: NodeJS.Timeout | null;
  lastSeen: number;
}

export interface OwnerSessionsConfig {
  /** The owner key file; null when the store has no key the server could find (said why). */
  keyFile: string | null;
  /** Why there is no key file, shown on the unlock page. */
  keyProblem?: string;
  /** The key id the store anchors the subject with now: a key file holding another is refused. */
  expectedKeyId: () => Promise<string | null>;
  idleMs?: number;
  /** The first wrong passphrase's wait (doubling after each one; tests shorten it). */
  unlockDelayBaseMs?: number;
  /** Opens the key file (default `loadOwnerKey`; scrypt, about a third of a second). */
  openKey?: (keyFile: string, passphrase: string) => OwnerSigner;
}

const token = () => randomBytes(32).toString('base64url');
/** What `token()` makes: 43 base64url characters. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The owner's browser sessions. The owner key is decrypted only by `unlock`, held in memory by
 * the one session that unlocked it, and forgotten on `lock`, after `idleMs` without a request
 * from that session (by its timer, or by the wall clock when a timer was late), or when the
 * server stops. Only sessions that unlocked are kept: a locked visitor's CSRF token is derived
 * from its cookie id with a server secret, so no number of cookieless requests can push the
 * owner's unlock form out. Wrong passphrases make everyone wait longer (one counter for the
 * server, so a new cookie does not reset it), and a try during another, or during the wait
 * after a wrong one, is refused at once (UNLOCK_THROTTLED) instead of queued behind it.
 */
export class OwnerSessions {
  readonly idleMs: number;
  private readonly sessions = new Map<string, SessionState>();
  private readonly secret = randomBytes(32);
  private failures = 0;
  private trying = false;
  private nextTryAt = 0;
  private readonly openKey: (keyFile: string, passphrase: string) => OwnerSigner;

  constructor(private readonly config: OwnerSessionsConfig) {
    this.idleMs = config.idleMs ?? DEFAULT_IDLE_MS;
    // a timer longer than 2^31 - 1 ms fires at once: refused, not a key forgotten at once
    if (!Number.isInteger(this.idleMs) || this.idleMs < 1 || this.idleMs > 2 ** 31 - 1) {
      throw new EngineError('INVALID_ARGUMENT', 'the idle lock is 1 ms to about 24 days', {
        data: { field: 'idleMs' },
      });
    }
    this.openKey = config.openKey ?? loadOwnerKey;
  }

  /** Why the page cannot be unlocked at all (no key file for this store), or null. */
  get keyProblem(): string | null {
    if (this.config.keyFile !== null) return null;
    return this.config.keyProblem ?? 'the server has no owner key file for this store';
  }

  /**
   * The session a cookie names (a request from it: its idle time starts again), or a locked one
   * for any other id, kept nowhere; a missing or malformed id gets a new random one.
   */
  session(id: string | undefined): OwnerSession {
    const found = id === undefined ? undefined : this.sessions.get(id);
    if (found !== undefined) {
      const now = Date.now();
      // a timer can be late (a machine asleep): the wall clock decides too
      if (found.signer !== null && now - found.lastSeen > this.idleMs) this.forget(found);
      found.lastSeen = now;
      if (found.signer !== null) this.arm(found);
      return found;
    }
    const sid = id !== undefined && SESSION_ID.test(id) ? id : token();
    return { id: sid, csrf: this.csrfFor(sid), unlocked: false, flash: null };
  }

  /** Whether a posted CSRF token is the session's own. */
  csrfMatches(session: OwnerSession, posted: unknown): boolean {
    return typeof posted === 'string' && sameSecret(posted, session.csrf);
  }

  /**
   * Opens the owner key with `passphrase` for a new session (the old id is dropped, so an id
   * known before unlocking is worth nothing after). BAD_PASSPHRASE after a growing wait.
   */
  async unlock(session: OwnerSession, passphrase: string): Promise<OwnerSession> {
    const wait = this.nextTryAt - Date.now();
    if (this.trying || wait > 0) {
      const seconds = Math.max(1, Math.ceil(wait / 1000));
      throw new ServerError(
        'UNLOCK_THROTTLED',
        this.trying
          ? 'another unlock is being tried right now; try again in a moment'
          : `a wrong passphrase was given: try again in ${seconds} s`,
        { data: { retryAfterSeconds: seconds } },
      );
    }
    this.trying = true;
    let signer: OwnerSigner;
    try {
      signer = await this.tryUnlock(passphrase);
    } finally {
      this.trying = false;
    }
    this.drop(session.id);
    return this.create(signer);
  }

  private async tryUnlock(passphrase: string): Promise<OwnerSigner> {
    const keyFile = this.config.keyFile;
    if (keyFile === null) {
      throw new EngineError('NO_OWNER_KEY', this.keyProblem ?? 'no owner key file');
    }
    if (passphrase === '') {
      throw new EngineError('PASSPHRASE_REQUIRED', 'type the owner key passphrase to unlock');
    }
    let signer: OwnerSigner;
    try {
      signer = this.openKey(keyFile, passphrase);
    } catch (err) {
      if (err instanceof EngineError && err.code === 'BAD_PASSPHRASE') {
        this.failures += 1;
        const wait = unlockDelayMs(this.failures, this.config.unlockDelayBaseMs);
        this.nextTryAt = Date.now() + wait;
        await new Promise((resolve) => setTimeout(resolve, wait));
        throw new EngineError(
          'BAD_PASSPHRASE',
          `that passphrase does not open the owner key (wrong ${this.failures} time${this.failures === 1 ? '' : 's'} in a row; each try waits longer, this one ${wait / 1000} s)`,
          { data: { failures: this.failures, waitedMs: wait } },
        );
      }
      throw err;
    }
    const expected = await this.config.expectedKeyId();
    if (expected === null) {
      throw new EngineError('NO_OWNER_KEY', 'the store holds no owner key for this subject yet');
    }
    if (signer.keyId !== expected) {
      throw new EngineError(
        'WRONG_KEY',
        `the key file holds key ${signer.keyId}, but the store anchors this subject with key ${expected}`,
      );
    }
    this.failures = 0;
    return signer;
  }

  /** The session's open owner key; REVIEW_LOCKED when it has none (never unlocked, or forgotten). */
  signer(session: OwnerSession): OwnerSigner {
    const state = this.sessions.get(session.id);
    if (state?.signer === null || state === undefined) {
      throw new ServerError(
        'REVIEW_LOCKED',
        'the review page is locked (the owner key was forgotten after the idle time, or by the lock button): unlock it again',
      );
    }
    return state.signer;
  }

  /** Forgets the session's owner key at once; the session goes on, locked. */
  lock(session: OwnerSession): void {
    const state = this.sessions.get(session.id);
    if (state !== undefined) this.forget(state);
  }

  /** How many sessions hold the owner key now. */
  unlockedCount(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.signer !== null) n += 1;
    return n;
  }

  /** Forgets every key and session (the server is stopping). */
  close(): void {
    for (const id of [...this.sessions.keys()]) this.drop(id);
  }

  private create(signer: OwnerSigner | null): SessionState {
    while (this.sessions.size >= MAX_SESSIONS) {
      // the one seen longest ago goes first; an unlocked one only when all are
      const oldest = [...this.sessions.values()].sort(
        (a, b) => Number(a.signer !== null) - Number(b.signer !== null) || a.lastSeen - b.lastSeen,
      )[0];
      if (oldest === undefined) break;
      this.drop(oldest.id);
    }
    const state: SessionState = {
      id: token(),
      csrf: token(),
      unlocked: signer !== null,
      flash: null,
      signer,
      timer: null,
      lastSeen: Date.now(),
    };
    this.sessions.set(state.id, state);
    if (signer !== null) this.arm(state);
    return state;
  }

  /** A locked visitor's CSRF token: bound to its cookie id by the server's secret. */
  private csrfFor(id: string): string {
    return createHmac('sha256', this.secret).update(id).digest('base64url');
  }

  /** (Re)starts the idle timer that forgets the session's key. */
  private arm(state: SessionState): void {
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = setTimeout(() => this.forget(state), this.idleMs);
    state.timer.unref();
  }

  /** Forgets the key a session holds; the session stays, locked, with its CSRF token. */
  private forget(state: SessionState): void {
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = null;
    state.signer = null;
    state.unlocked = false;
  }

  private drop(id: string): void {
    const state = this.sessions.get(id);
    if (state === undefined) return;
    this.forget(state);
    this.sessions.delete(id);
  }
}
