import { ServerError } from '../server-errors.js';
import type { LookupFunction } from 'node:net';
import { EngineError } from '../../src/index.js';
import {
  httpRequest,
  httpTarget,
  type HttpFailureCode,
  type HttpTargetRefusal,
} from '../../src/faces.js';
import { oneLine } from '../../src/rules.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface PileNotifierConfig {
  /** Where notices are POSTed: http or https, no credentials, loopback or an allowlisted host. */
  url: string;
  /** Hosts allowed besides loopback, by exact name (the http probe allowlist's semantics). */
  allowlist: readonly string[];
  subject: string;
  /** How many proposals wait for review. */
  pileCount: () => Promise<number>;
  /** The review page, named in the notice. */
  reviewUrl?: string;
  /** How often `start()` looks at the pile (default 30 s). */
  intervalMs?: number;
  now?: () => Date;
  /** The deadline over one POST: connect, send, answer (default 5 s). */
  timeoutMs?: number;
  /** A failed look or POST (default: one line on stderr). */
  onError?: (err: unknown) => void;
  /** Name resolution (hosts that pin DNS; tests). Default `dns.lookup`. */
  lookup?: LookupFunction;
}

export type PileCheck = 'sent' | 'quiet' | 'failed';

export interface PileNotifier {
  /** Looks once; sends a notice if the pile just filled or a day passed since the last one. */
  check(): Promise<PileCheck>;
  /** Looks now and then every `intervalMs`, on a timer that keeps no process alive. */
  start(): void;
  /** Stops the timer and waits for a running look. */
  stop(): Promise<void>;
}

/** What leaves the machine: a count and links, never memory text. */
export interface PileNotice {
  type: 'memledger.pile';
  subject: string;
  pending: number;
  reviewUrl: string | null;
  at: string;
}

const REFUSALS: Record<Exclude<HttpTargetRefusal, 'host'>, (url: URL | null) => string> = {
  malformed: () => 'the notify URL is not a URL',
  scheme: (url) => `the notify URL is http or https, got "${url?.protocol ?? ''}"`,
  // Named without the URL: its credentials are the thing not to echo.
  credentials: () => 'the notify URL carries no user name or password',
};

/** The URL checked from its text alone, before any lookup or connection. */
function notifyTarget(raw: string, allowlist: readonly string[]) {
  const target = httpTarget(raw, allowlist);
  if (target.kind === 'allowed') return target;
  if (target.reason === 'host') {
    throw new ServerError(
      'NOTIFY_HOST_NOT_ALLOWED',
      `${target.host} is neither loopback nor in the allowlist; notices go nowhere else`,
      { data: { field: 'notifyUrl', host: target.host } },
    );
  }
  throw new EngineError('INVALID_ARGUMENT', REFUSALS[target.reason](target.url), {
    data: { field: 'notifyUrl', reason: target.reason },
  });
}

function positiveMs(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > 2 ** 31 - 1) {
    throw new EngineError('INVALID_ARGUMENT', `${name} is a whole number of milliseconds`, {
      data: { field: name },
    });
  }
  return value;
}

function failed(reason: string, message: string, cause?: unknown): ServerError {
  return new ServerError('NOTIFY_FAILED', message, {
    data: { reason },
    ...(cause === undefined ? {} : { cause }),
  });
}

const FAILURE_REASONS: Record<HttpFailureCode, string> = {
  TIMEOUT: 'timeout',
  TOO_LARGE: 'too_large',
  NOT_ALLOWED: 'not_allowed',
  CONNECTION_FAILED: 'connection',
};

/** A receiver's answer body is read only to be dropped; a longer one is a failure. */
const MAX_ANSWER_BYTES = 64 * 1024;

const reportToStderr = (err: unknown): void => {
  const what = err instanceof Error ? err.message : String(err);
  process.stderr.write(`memledger serve: pile notice: ${oneLine(what)}\n`);
};

/**
 * Keeps the pile from being silent: a notice when it goes from empty to non-empty, then at most
 * one a day while it stays non-empty. The URL is refused here, before anything starts.
 */
export function createPileNotifier(config: PileNotifierConfig): PileNotifier {
  const { url, loopbackOnly } = notifyTarget(config.url, config.allowlist);
  const intervalMs = positiveMs(config.intervalMs ?? 30_000, 'intervalMs');
  const timeoutMs = positiveMs(config.timeoutMs ?? 5_000, 'timeoutMs');
  const now = config.now ?? (() => new Date());
  const onError = config.onError ?? reportToStderr;

  let wasEmpty = true;
  let lastSentAt: Date | null = null;
  let running: Promise<PileCheck> | null = null;
  let timer: NodeJS.Timeout | null = null;

  const report = (err: unknown): void => {
    try {
      onError(err);
    } catch {
      // A reporter that throws must not turn the timer's look into an unhandled rejection.
    }
  };

  async function look(): Promise<PileCheck> {
    try {
      const pending = await config.pileCount().catch((err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        throw failed('count', `the pile could not be counted: ${why}`, err);
      });
      if (!Number.isSafeInteger(pending) || pending < 0) {
        throw failed('count', `the pile count is not a whole number: ${String(pending)}`);
      }
      if (pending === 0) {
        wasEmpty = true;
        return 'quiet';
      }
      const at = now();
      if (!wasEmpty && lastSentAt !== null && at.getTime() - lastSentAt.getTime() < DAY_MS) {
        return 'quiet';
      }
      const notice: PileNotice = {
        type: 'memledger.pile',
        subject: config.subject,
        pending,
        reviewUrl: config.reviewUrl ?? null,
        at: at.toISOString(),
      };
      const answer = await httpRequest(url, {
        method: 'POST',
        userAgent: 'memledger',
        body: { contentType: 'application/json', data: JSON.stringify(notice) },
        timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
        loopbackOnly,
        ...(config.lookup === undefined ? {} : { lookup: config.lookup }),
      });
      if (answer.kind === 'failed') {
        throw failed(FAILURE_REASONS[answer.code], answer.message, answer.cause);
      }
      const { status } = answer;
      if (status < 200 || status > 299) {
        const why = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
        throw failed('status', `the receiver answered ${status}${why}`);
      }
      lastSentAt = at;
      wasEmpty = false;
      return 'sent';
    } catch (err) {
      report(err);
      return 'failed';
    }
  }

  const check = (): Promise<PileCheck> => {
    running ??= look().finally(() => {
      running = null;
    });
    return running;
  };

  return {
    check,
    start() {
      if (timer !== null) return;
      timer = setInterval(() => void check(), intervalMs);
      timer.unref();
      void check();
    },
    async stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
