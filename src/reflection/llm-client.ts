import { EngineError } from '../domain/errors.js';

/** The wire protocols memledger speaks; `openai` also serves Ollama, vLLM and OpenRouter. */
export const LLM_PROVIDERS = ['openai', 'anthropic'] as const;
/** One of `LLM_PROVIDERS`. */
export type LlmProvider = (typeof LLM_PROVIDERS)[number];

/**
 * One structured generation: a system text, a user text, and the JSON Schema of the one object
 * the model must answer with (a `json_schema` response format, or a forced tool of this name).
 */
export interface StructuredRequest {
  /** The schema's (and the forced tool's) name: `propose_memories`, `write_summary`. */
  name: string;
  description: string;
  /** A JSON Schema of an object, strict (every property required, no others). */
  schema: Readonly<Record<string, unknown>>;
  system: string;
  user: string;
  /** The longest answer, in tokens (default 4096). */
  maxTokens?: number;
}

/** What a provider answered: the parsed object, the model it names, and the tokens it counts. */
export interface StructuredAnswer {
  value: Record<string, unknown>;
  /** The model the provider says answered (it may differ from the one asked for). */
  model: string;
  usage: { inputTokens: number; outputTokens: number };
}

/** A model behind a provider's HTTP API. Every call is a utility generation, never a turn. */
export interface LlmClient {
  readonly provider: LlmProvider;
  readonly model: string;
  /** Where it is reached (the base URL, with no credentials). */
  readonly url: string;
  generate(request: StructuredRequest): Promise<StructuredAnswer>;
}

/** How to reach a model. The API key comes from the caller's environment, never a flag. */
export interface LlmOptions {
  provider: LlmProvider;
  /**
   * The API base. OpenAI-compatible: `/v1` included (`https://api.openai.com/v1`,
   * `http://localhost:11434/v1`); requests go to `…/chat/completions`. Anthropic: the origin
   * (`https://api.anthropic.com`, or with `/v1`); requests go to `…/v1/messages`.
   */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Per attempt, in milliseconds (default 120 000). */
  timeoutMs?: number;
  /** Attempts after the first on 429, 5xx, a dropped connection or a timeout (default 2). */
  retries?: number;
  /** The first retry's wait; each next one doubles (default 1000 ms). */
  retryDelayMs?: number;
  /** The longest wait before a retry, a provider's Retry-After included (default 30 000 ms). */
  maxRetryDelayMs?: number;
}

/** Why a call failed, in `LLM_FAILED`'s `data.reason`. */
export type LlmFailure =
  | 'unreachable'
  | 'timeout'
  | 'http'
  | 'not_json'
  | 'refusal'
  | 'truncated'
  | 'no_answer'
  | 'not_an_object';

/** The one error a model call ends in: the provider's own message, and why. */
export function llmFailed(
  provider: LlmProvider,
  reason: LlmFailure,
  message: string,
  extra: { status?: number; cause?: unknown } = {},
): EngineError {
  return new EngineError('LLM_FAILED', `${provider}: ${message}`, {
    data: { provider, reason, ...(extra.status === undefined ? {} : { status: extra.status }) },
    ...(extra.cause === undefined ? {} : { cause: extra.cause }),
  });
}

/** The longest answer body read, in bytes: a model's answer is a memory batch, not a download. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

const RETRIABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504, 529]);

/** A Retry-After header (seconds, or an HTTP date) in milliseconds, or null. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** A checked base URL: http or https, no credentials in it, trailing slashes gone. */
export function checkBaseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    // a URL that does not parse may still carry user:pass@: never echo it
    const shown = raw.slice(0, 200).replace(/\/\/.*@/s, '//…@');
    throw new EngineError('INVALID_ARGUMENT', `not a URL: "${shown}"`, {
      data: { field: 'llmUrl' },
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EngineError('INVALID_ARGUMENT', `an LLM URL is http or https: ${url.origin}`, {
      data: { field: 'llmUrl' },
    });
  }
  if (url.search !== '') {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'an LLM URL takes no query: a key belongs in MEMLEDGER_LLM_API_KEY, never in a URL',
      { data: { field: 'llmUrl' } },
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'an LLM URL carries no credentials: put the key in MEMLEDGER_LLM_API_KEY',
      { data: { field: 'llmUrl' } },
    );
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  url.hash = '';
  return url;
}

/** What one HTTP exchange returned: the status and the parsed body (or the raw text). */
export interface Exchange {
  status: number;
  body: unknown;
  text: string;
}

/** A redirect's target for a message: its origin and path, never credentials or a query. */
function safeLocation(location: string): string {
  try {
    const u = new URL(location);
    return `${u.origin}${u.pathname}`.slice(0, 200);
  } catch {
    return '(an unreadable location)';
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Reads at most MAX_ANSWER_BYTES of a body; more is a failure, not a silent cut. */
async function readBounded(res: Response, provider: LlmProvider): Promise<string> {
  const reader = res.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw llmFailed(provider, 'http', `the answer is longer than ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * POSTs JSON with a per-attempt timeout, retrying 429, 5xx, a dropped connection and a timeout
 * with doubling waits (a provider's Retry-After wins, up to the cap). Any other status, or the
 * last attempt's failure, is LLM_FAILED with the provider's message (`errorMessage`).
 */
export async function postJson(
  options: Required<Pick<LlmOptions, 'provider' | 'timeoutMs' | 'retries'>> &
    Pick<LlmOptions, 'retryDelayMs' | 'maxRetryDelayMs'>,
  url: URL,
  headers: Record<string, string>,
  body: unknown,
  errorMessage: (body: unknown, text: string) => string,
): Promise<Exchange> {
  const { provider } = options;
  const payload = JSON.stringify(body);
  const maxDelay = options.maxRetryDelayMs ?? 30_000;
  let delay = options.retryDelayMs ?? 1000;
  for (let attempt = 0; ; attempt++) {
    const last = attempt >= options.retries;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body: payload,
        // a redirect is answered, not followed: the key would travel with it
        redirect: 'manual',
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError';
      if (last) {
        throw timedOut
          ? llmFailed(
              provider,
              'timeout',
              `no answer from ${url.origin} within ${options.timeoutMs} ms`,
              {
                cause: err,
              },
            )
          : llmFailed(
              provider,
              'unreachable',
              `cannot reach ${url.origin}: ${(err as Error).message}`,
              {
                cause: err,
              },
            );
      }
      await sleep(Math.min(delay, maxDelay));
      delay *= 2;
      continue;
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => undefined);
      throw llmFailed(
        provider,
        'http',
        `${url.origin} answered ${res.status} (a redirect${res.headers.get('location') === null ? '' : ` to ${safeLocation(res.headers.get('location') ?? '')}`}); memledger does not follow redirects, so the key never goes elsewhere: configure the final URL`,
        { status: res.status },
      );
    }
    let text: string;
    try {
      text = await readBounded(res, provider);
    } catch (err) {
      if (err instanceof EngineError) throw err;
      if (last) {
        const reason = (err as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable';
        throw llmFailed(provider, reason, `the answer from ${url.origin} broke off`, {
          cause: err,
        });
      }
      await sleep(Math.min(delay, maxDelay));
      delay *= 2;
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    if (res.ok) {
      if (parsed === null) {
        throw llmFailed(provider, 'not_json', `${url.origin} answered something that is not JSON`, {
          status: res.status,
        });
      }
      return { status: res.status, body: parsed, text };
    }
    if (!RETRIABLE.has(res.status) || last) {
      throw llmFailed(
        provider,
        'http',
        `${url.origin} answered ${res.status}: ${errorMessage(parsed, text).slice(0, 500)}`,
        { status: res.status },
      );
    }
    const asked = retryAfterMs(res.headers.get('retry-after'));
    await sleep(Math.min(asked ?? delay, maxDelay));
    delay *= 2;
  }
}

/** An answer's object: JSON text parsed, or LLM_FAILED saying what it was instead. */
export function answerObject(provider: LlmProvider, value: unknown): Record<string, unknown> {
  let v: unknown = value;
  if (typeof value === 'string') {
    try {
      v = JSON.parse(value);
    } catch {
      throw llmFailed(
        provider,
        'not_json',
        `the model's answer is not JSON: "${value.slice(0, 120)}${value.length > 120 ? '…' : ''}"`,
      );
    }
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw llmFailed(provider, 'not_an_object', 'the model answered JSON that is not an object');
  }
  return v as Record<string, unknown>;
}

/** A non-negative whole count from a provider's usage field (0 when absent or odd). */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_TOKENS
    ? value
    : 0;
}

/** The most tokens one call is believed to have counted; a larger figure is a hostile answer. */
export const MAX_TOKENS = 100_000_000;

/**
 * The model an answer names, when it is a plain name (1 to 200 characters, no control, format or
 * private-use characters); otherwise the one asked for. It is stored and printed.
 */
export function answeredModel(value: unknown, asked: string): string {
  return typeof value === 'string' &&
    value.length > 0 &&
    value.length <= 200 &&
    !/[\p{Cc}\p{Cf}\p{Co}\p{Cs}]/u.test(value)
    ? value
    : asked;
}

/**
 * A provider's message as memledger repeats it: the key blanked wherever it is echoed, control
 * characters and line breaks made spaces, so one error is one line and never carries the secret.
 */
export function cleanProviderText(text: string, secret: string | undefined): string {
  let out = text;
  if (secret !== undefined && secret.length >= 4) out = out.split(secret).join('[key]');
  return out.replace(/[\p{Cc}\p{Cf}]+/gu, ' ').trim();
}
