import { ServerError } from '../server-errors.js';
import type { Context } from 'hono';
import { setCookie } from 'hono/cookie';
import { EngineError } from '../../src/index.js';
import type { OwnerSession } from './owner-sessions.js';

/**
 * The review page's request plumbing: its cookie, its response headers, and the one way a form
 * post is read (urlencoded, bounded while it is read, no field twice). The routes are in
 * review-app.ts.
 */

export const COOKIE = 'memledger_review';
const MAX_FORM_BYTES = 64 * 1024;

/** Response headers on every page: nothing inline runs, nothing frames it, nothing is cached. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  // same-origin, not no-referrer: under no-referrer a browser posts forms with `Origin: null`
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export const isHtmx = (c: Context) => c.req.header('hx-request') === 'true';

/** The typed YES a consequential form needs: CONFIRMATION_REQUIRED without it, nothing changed. */
export function requireYes(form: URLSearchParams, why: string): void {
  if ((form.get('confirm') ?? '').trim() !== 'YES') {
    throw new ServerError(
      'CONFIRMATION_REQUIRED',
      `type YES (in capitals) to ${why}; nothing changed`,
    );
  }
}

/**
 * A text the owner typed (a textarea's): line breaks as `\n`, trimmed, not blank and at most
 * `max` characters, else INVALID_ARGUMENT naming the field (and nothing changed).
 */
export function formText(form: URLSearchParams, field: string, max: number, ask: string): string {
  const text = (form.get(field) ?? '').replace(/\r\n?/g, '\n').trim();
  const refuse = (why: string) =>
    new EngineError('INVALID_ARGUMENT', `${field}: ${why}; nothing changed`, { data: { field } });
  if (text === '') throw refuse(ask);
  const length = [...text].length;
  if (length > max) throw refuse(`at most ${max} characters (this one has ${length})`);
  return text;
}

/** A `?page=` value: a whole number of at least 1, else `fallback`. */
export function positiveInt(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 1 ? n : fallback;
}

/** The session cookie: not readable by scripts, never sent by another site's request. */
export function setSessionCookie(c: Context, s: OwnerSession): void {
  setCookie(c, COOKIE, s.id, { httpOnly: true, sameSite: 'Strict', path: '/' });
}

/** A one-line field the owner may leave empty: trimmed, undefined when empty, at most `max`. */
export function optionalFormField(
  form: URLSearchParams,
  field: string,
  max: number,
): string | undefined {
  const value = (form.get(field) ?? '').trim();
  if (value === '') return undefined;
  if ([...value].length > max) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `${field}: at most ${max} characters; nothing changed`,
      { data: { field } },
    );
  }
  return value;
}

/** The posted form: urlencoded, at most 64 KiB, no field named twice (but `ids`). */
export async function readForm(c: Context): Promise<URLSearchParams> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'the page posts forms as application/x-www-form-urlencoded; nothing changed',
      { data: { field: 'content-type' } },
    );
  }
  const length = Number(c.req.header('content-length') ?? '0');
  if (length > MAX_FORM_BYTES) throw formTooLarge();
  const text = await readCapped(c.req.raw.body, MAX_FORM_BYTES);
  const form = new URLSearchParams(text);
  for (const key of new Set(form.keys())) {
    if (key !== 'ids' && form.getAll(key).length > 1) {
      throw new EngineError('INVALID_ARGUMENT', `the form names ${key.slice(0, 32)} twice`, {
        data: { field: key.slice(0, 32) },
      });
    }
  }
  return form;
}

function formTooLarge(): ServerError {
  return new ServerError('BODY_TOO_LARGE', `the form is larger than ${MAX_FORM_BYTES} bytes`);
}

/** The body as UTF-8, read only up to `max` bytes: a longer (or endless, chunked) one stops there. */
async function readCapped(body: ReadableStream<Uint8Array> | null, max: number): Promise<string> {
  if (body === null) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw formTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The peer address of a request served by @hono/node-server; null when served in-process. */
export function remoteAddress(c: Context): string | null {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? null;
}

export function isLoopbackAddress(address: string): boolean {
  const a = address.replace(/^::ffff:/i, '');
  return a === '::1' || /^127\./.test(a);
}
