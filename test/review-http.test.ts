/**
 * The owner's review page over plain HTTP, no browser: a real `memledger serve` on port 0 and
 * `fetch` with one cookie. Every answer's security headers and cookie, every form post's
 * refusals (CSRF, cross-site, body type, size, repeated fields) changing nothing, tokens refused
 * even beside an unlocked cookie, the locked page, the session rotated on unlock, the passphrase
 * back-off, a key that is not the store's, the typed YES, htmx partials, NEWER_VALUE_LIVE,
 * pagination, reject-night's bounds, hostile text escaped, and the self-served assets.
 */
import { mkdtempSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningServe } from '../server/serve.js';
import {
  generateOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type SubjectHandle,
  type FactId,
} from '../src/index.js';
import { dumpStore } from './support/dump-store.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import {
  makeOwnerSigner,
  OWNER_PASSPHRASE,
  ownerWithTokens,
  type SubjectWithTokens,
} from './support/tokens.js';

const FORM = 'application/x-www-form-urlencoded';
const COOKIE = 'memledger_review';
const VIEWS = ['/', '/memory', '/dropped', '/ledger', '/arrivals', '/chain'] as const;
const TURN = 'I moved to Lisbon in May. I drink green tea every morning. Call me Ana.';
const QUOTE = 'I drink green tea every morning';
const SCRIPT = '<script>window.__pwned=1</script>';
const BREAKOUT = '"><img src=x onerror=alert(1)>';
const JS_LINK = 'javascript:alert(2)';
const HOSTILE = `Payday is Friday ${SCRIPT} ${BREAKOUT} <a href="${JS_LINK}">open</a>`;

/** One key file for every store of the file: each one costs a scrypt to make and to load. */
const OWNER_KEY = makeOwnerSigner();

type Fields = Record<string, string> | Array<[string, string]>;

interface Reply {
  status: number;
  html: string;
  headers: Headers;
  /** The raw Set-Cookie of this answer, if it set the session cookie. */
  setCookie: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const formBody = (fields: Fields) =>
  new URLSearchParams(Array.isArray(fields) ? fields : Object.entries(fields)).toString();

/** A urlencoded post's body and headers, for `Visitor.send`. */
const form = (fields: Fields, headers: Record<string, string> = {}) => ({
  body: formBody(fields),
  headers: { 'content-type': FORM, ...headers },
});

/** A body sent chunked, with no Content-Length to read its size from. */
function stream(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + 8_192));
      at += 8_192;
    },
  });
}

/** The CSRF token the page put in its forms. */
function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (m?.[1] === undefined) throw new Error('the page carries no CSRF field');
  return m[1];
}

/** The code of the error flash a full page shows (`CODE: message`), or null. */
function codeOf(html: string): string | null {
  return /class="flash error" role="status">\s*([A-Z_]+):/.exec(html)?.[1] ?? null;
}

/** The flash text a page or partial shows. */
function flashOf(html: string): string {
  return /class="flash (?:ok|error)" role="status">([^<]*)</.exec(html)?.[1]?.trim() ?? '';
}

/** The ids of the proposal cards a page shows, in order. */
function cardIds(html: string): string[] {
  return [...html.matchAll(/<article class="proposal[^"]*"[^>]*data-proposal="([^"]+)"/g)].map(
    (m) => m[1] ?? '',
  );
}

/** The attributes of a Set-Cookie, lowercased (`httponly`, `path=/`, …). */
function cookieAttributes(setCookie: string | null): string[] {
  if (setCookie === null) throw new Error('the answer set no session cookie');
  return setCookie
    .split(';')
    .slice(1)
    .map((a) => a.trim().toLowerCase());
}

const isLockedPage = (html: string) =>
  html.includes('name="passphrase"') && !html.includes('<nav aria-label="views"');

/**
 * What a page must never hold, whatever text it shows: a script but the self-served htmx, an
 * element that is not the page's own, an inline handler, a link or source off this server.
 */
function inertProblems(html: string): string[] {
  const problems: string[] = [];
  for (const m of html.matchAll(/<script\b[^>]*>/gi)) {
    if (m[0] !== '<script src="/assets/htmx.min.js" defer>') problems.push(`script: ${m[0]}`);
  }
  if (/<img\b/i.test(html)) problems.push('an <img> element');
  if (/<a\b[^>]*href="(?!\/)/i.test(html)) problems.push('a link off the page');
  for (const m of html.matchAll(/<[a-z][^>]*>/gi)) {
    // attribute values hold escaped text only: what is left outside them is markup
    const bare = m[0].replace(/"[^"]*"/g, '""');
    if (/\son[a-z]+\s*=/i.test(bare)) problems.push(`handler: ${m[0]}`);
    if (/'/.test(bare)) problems.push(`unquoted markup: ${m[0]}`);
  }
  for (const m of html.matchAll(/\s(?:src|href|action|formaction|hx-post|hx-get)="([^"]*)"/gi)) {
    if (!(m[1] ?? '').startsWith('/')) problems.push(`off-page url: ${m[0]}`);
  }
  return problems;
}

/** A browser reduced to what the page needs: one cookie, forms, no redirects followed. */
class Visitor {
  cookie: string | null = null;

  constructor(private readonly base: string) {}

  async send(
    method: 'GET' | 'POST',
    path: string,
    init: { body?: NonNullable<RequestInit['body']>; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookie !== null) headers.cookie = `${COOKIE}=${this.cookie}`;
    const res = await fetch(new URL(path, this.base), {
      method,
      headers,
      redirect: 'manual',
      ...(init.body === undefined ? {} : { body: init.body, duplex: 'half' }),
    } as RequestInit);
    const setCookie = res.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`)) ?? null;
    if (setCookie !== null) this.cookie = /^[^=]+=([^;]*)/.exec(setCookie)?.[1] ?? null;
    return { status: res.status, html: await res.text(), headers: res.headers, setCookie };
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Reply> {
    return this.send('GET', path, { headers });
  }

  post(path: string, fields: Fields, headers: Record<string, string> = {}): Promise<Reply> {
    return this.send('POST', path, {
      body: formBody(fields),
      headers: { 'content-type': FORM, ...headers },
    });
  }

  /** This visitor's CSRF token, read off the page as a browser would. */
  async csrf(): Promise<string> {
    return csrfOf((await this.get('/')).html);
  }

  /** GET / then POST /unlock with `passphrase`: the answer to the post. */
  async unlock(passphrase = OWNER_PASSPHRASE): Promise<Reply> {
    return this.post('/unlock', { _csrf: await this.csrf(), passphrase });
  }
}

async function unlocked(base: string): Promise<Visitor> {
  const v = new Visitor(base);
  const r = await v.unlock();
  if (r.status !== 303) throw new Error(`unlock answered ${r.status}: ${flashOf(r.html)}`);
  return v;
}

/** An address of this machine that is not loopback, when it has one. */
const EXTERNAL_IP = Object.values(networkInterfaces())
  .flat()
  .find((i) => i !== undefined && !i.internal && i.family === 'IPv4')?.address;

describe.each(ENGINES)('the review page over HTTP [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let owner: SubjectWithTokens;
  let me: SubjectHandle;
  let bob: SubjectHandle;
  let sessionId: string;
  let bobSession: string;
  let serve: RunningServe;
  let base: string;
  /** The owner's browser, unlocked once for the whole file. */
  let browser: Visitor;
  let counter = 0;

  const servers: RunningServe[] = [];
  const extraServe = async (review?: Parameters<typeof startServe>[0]['review']) => {
    const s = await startServe({ engine, port: 0, ...(review === undefined ? {} : { review }) });
    servers.push(s);
    return s;
  };

  /** A new pending proposal of `who` (the owner by default); its id. */
  async function propose(
    options: { key?: string; text?: string; who?: SubjectHandle; session?: string } = {},
  ): Promise<string> {
    counter += 1;
    const who = options.who ?? me;
    const r = await who.gate.propose({
      sessionId: options.session ?? (who === me ? sessionId : bobSession),
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: options.text ?? `The user drinks green tea every morning (${counter}).`,
          origin: 'saw',
          evidence: { turn: 1, quote: QUOTE },
          ...(options.key === undefined ? {} : { key: options.key }),
        },
      ],
    });
    const id = r.proposed[0]?.id;
    if (id === undefined) throw new Error(`dropped: ${JSON.stringify(r.dropped)}`);
    return id;
  }

  const status = async (id: string) => (await me.facts.get(id as FactId)).status;

  beforeAll(async () => {
    t = await openTestEngine(kind, { arrival: { timeZone: 'UTC' } });
    engine = t.engine;
    owner = await ownerWithTokens(engine, 'owner', OWNER_KEY);
    await ownerWithTokens(engine, 'bob', OWNER_KEY);
    me = engine.subject('owner');
    bob = engine.subject('bob');
    sessionId = (await me.sessions.create({ title: 'tea' })).id;
    await me.turns.add({ sessionId, role: 'user', content: TURN });
    bobSession = (await bob.sessions.create({ title: 'tea' })).id;
    await bob.turns.add({ sessionId: bobSession, role: 'user', content: TURN });
    serve = await startServe({
      engine,
      port: 0,
      review: { subject: 'owner', keyFile: owner.keyPath, unlockDelayBaseMs: 20 },
    });
    base = serve.url;
    browser = await unlocked(base);
  });

  afterAll(async () => {
    for (const s of servers) await s.close();
    await serve?.close();
    await t?.close();
  });

  it('every page answer carries the security headers, and the cookie is HttpOnly, SameSite=Strict, Path=/', async () => {
    const id = await propose();
    const fresh = new Visitor(base);
    const answers: Array<[string, Reply]> = [];
    for (const path of VIEWS) {
      answers.push([`locked GET ${path}`, await fresh.get(path)]);
      answers.push([`unlocked GET ${path}`, await browser.get(path)]);
    }
    const csrf = await browser.csrf();
    answers.push([
      'refused post',
      await browser.post(`/pile/${id}/approve`, { _csrf: csrf, confirm: 'no' }),
    ]);
    answers.push([
      'refused htmx post',
      await browser.post(`/pile/${id}/approve`, { _csrf: csrf }, { 'hx-request': 'true' }),
    ]);
    answers.push([
      'locked htmx post',
      await fresh.post(
        `/pile/${id}/reject`,
        { _csrf: await fresh.csrf() },
        { 'hx-request': 'true' },
      ),
    ]);
    answers.push(['token', await browser.get('/', { authorization: `Bearer ${owner.agent}` })]);
    answers.push([
      'htmx decision',
      await browser.post(`/pile/${id}/reject`, { _csrf: csrf }, { 'hx-request': 'true' }),
    ]);
    answers.push(['forged', await browser.post('/lock', { _csrf: 'wrong' })]);
    answers.push([
      'too large',
      await browser.post('/lock', { _csrf: csrf, pad: 'x'.repeat(65 * 1024) }),
    ]);
    answers.push([
      'locked post',
      await fresh.post(`/pile/${id}/reject`, { _csrf: await fresh.csrf() }),
    ]);
    const gone = await propose();
    answers.push(['redirect', await browser.post(`/pile/${gone}/reject`, { _csrf: csrf })]);
    expect(answers.map(([, r]) => r.status)).toEqual([
      ...VIEWS.flatMap(() => [200, 200]),
      400,
      400,
      204,
      403,
      200,
      403,
      413,
      401,
      303,
    ]);
    const bad: string[] = [];
    for (const [label, r] of answers) {
      const csp = r.headers.get('content-security-policy') ?? '';
      if (!csp.includes("script-src 'self'") || !csp.includes("default-src 'none'"))
        bad.push(`${label}: CSP ${csp}`);
      if (csp.includes('unsafe-inline') || csp.includes('unsafe-eval'))
        bad.push(`${label}: CSP allows inline`);
      if (!csp.includes("frame-ancestors 'none'")) bad.push(`${label}: frame-ancestors`);
      if (r.headers.get('x-frame-options') !== 'DENY') bad.push(`${label}: X-Frame-Options`);
      if (r.headers.get('x-content-type-options') !== 'nosniff') bad.push(`${label}: nosniff`);
      if (r.headers.get('cache-control') !== 'no-store') bad.push(`${label}: Cache-Control`);
    }
    expect(bad).toEqual([]);

    const first = await new Visitor(base).get('/');
    expect(cookieAttributes(first.setCookie)).toEqual(
      expect.arrayContaining(['httponly', 'samesite=strict', 'path=/']),
    );
    // the cookie set on unlock carries the same attributes
    const opened = await new Visitor(base).unlock();
    expect(opened.status).toBe(303);
    expect(cookieAttributes(opened.setCookie)).toEqual(
      expect.arrayContaining(['httponly', 'samesite=strict', 'path=/']),
    );
  });

  it('every form post refuses a bad CSRF token, a cross-site post, a wrong body type, an oversized body and a repeated field, changing nothing', async () => {
    const p = await propose();
    const r = await me.ledger.retract({
      claim: 'The backup ran.',
      stoodOn: 'a stale log',
      whyWrong: 'the log was old',
      corrected: 'The backup did not run.',
      procedure: 'look at the folder',
      passObservation: 'no file',
      overturnCondition: 'a file',
      dueDays: 0,
    });
    const routes: Array<[string, Record<string, string>]> = [
      ['/unlock', { passphrase: OWNER_PASSPHRASE }],
      ['/lock', {}],
      [`/pile/${p}/approve`, { confirm: 'YES' }],
      [`/pile/${p}/reject`, {}],
      ['/pile/reject-night', { ids: p, day: '2026-01-01' }],
      [`/ledger/${r.id}/settle`, { verdict: 'stands', outcome: 'no file' }],
      [`/retractions/${r.id}/sign`, { confirm: 'YES' }],
    ];
    const csrf = await browser.csrf();
    const stranger = await new Visitor(base).csrf();
    const pad = 'x'.repeat(64 * 1024);
    const cases: Array<
      [string, (fields: Record<string, string>) => Parameters<Visitor['send']>[2], number, string]
    > = [
      ['no _csrf', (f) => form(f), 403, 'CSRF_INVALID'],
      ['a wrong _csrf', (f) => form({ ...f, _csrf: 'forged' }), 403, 'CSRF_INVALID'],
      ['an empty _csrf', (f) => form({ ...f, _csrf: '' }), 403, 'CSRF_INVALID'],
      ['another session’s _csrf', (f) => form({ ...f, _csrf: stranger }), 403, 'CSRF_INVALID'],
      [
        'Sec-Fetch-Site: cross-site',
        (f) => form({ ...f, _csrf: csrf }, { 'sec-fetch-site': 'cross-site' }),
        403,
        'CSRF_INVALID',
      ],
      [
        'Sec-Fetch-Site: same-site',
        (f) => form({ ...f, _csrf: csrf }, { 'sec-fetch-site': 'same-site' }),
        403,
        'CSRF_INVALID',
      ],
      [
        'text/plain',
        (f) => form({ ...f, _csrf: csrf }, { 'content-type': 'text/plain' }),
        400,
        'INVALID_ARGUMENT',
      ],
      [
        'multipart',
        (f) => form({ ...f, _csrf: csrf }, { 'content-type': 'multipart/form-data; boundary=x' }),
        400,
        'INVALID_ARGUMENT',
      ],
      [
        'JSON',
        (f) => ({
          body: JSON.stringify({ ...f, _csrf: csrf }),
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'INVALID_ARGUMENT',
      ],
      ['a body over 64 KiB', (f) => form({ ...f, _csrf: csrf, pad }), 413, 'BODY_TOO_LARGE'],
      [
        'a body over 64 KiB, chunked',
        (f) => ({
          body: stream(formBody({ ...f, _csrf: csrf, pad })),
          headers: { 'content-type': FORM },
        }),
        413,
        'BODY_TOO_LARGE',
      ],
      [
        '_csrf twice',
        (f) => form([...Object.entries(f), ['_csrf', csrf], ['_csrf', csrf]]),
        400,
        'INVALID_ARGUMENT',
      ],
      [
        'a field twice',
        (f) => form([...Object.entries(f), ['_csrf', csrf], ['note', 'a'], ['note', 'b']]),
        400,
        'INVALID_ARGUMENT',
      ],
    ];
    const cookie = browser.cookie;
    const before = await dumpStore(engine);
    const wrong: string[] = [];
    for (const [path, fields] of routes) {
      for (const [label, init, wantStatus, wantCode] of cases) {
        const got = await browser.send('POST', path, init(fields));
        const c = codeOf(got.html);
        if (got.status !== wantStatus || c !== wantCode)
          wrong.push(`${path} ${label} → ${got.status} ${c ?? flashOf(got.html)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(await dumpStore(engine)).toEqual(before);
    // and the session was neither locked nor rotated
    expect(browser.cookie).toBe(cookie);
    expect(isLockedPage((await browser.get('/')).html)).toBe(false);
    expect(await status(p)).toBe('proposed');
  });

  it('a body of exactly 64 KiB is read, one byte more is not', async () => {
    const csrf = await browser.csrf();
    const p = await propose();
    const prefix = formBody({ _csrf: csrf, confirm: 'no', pad: '' });
    const exact = prefix + 'x'.repeat(64 * 1024 - prefix.length);
    const at = await browser.send('POST', `/pile/${p}/approve`, {
      body: exact,
      headers: { 'content-type': FORM },
    });
    expect([at.status, codeOf(at.html)]).toEqual([400, 'CONFIRMATION_REQUIRED']);
    const over = await browser.send('POST', `/pile/${p}/approve`, {
      body: `${exact}x`,
      headers: { 'content-type': FORM },
    });
    expect([over.status, codeOf(over.html)]).toEqual([413, 'BODY_TOO_LARGE']);
  });

  it('stops reading a chunked form past 64 KiB: the refusal comes before the rest is sent', async () => {
    const csrf = await browser.csrf();
    const total = 16 * 1024 * 1024;
    let pulled = 0;
    let answeredAt: number | null = null;
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`_csrf=${csrf}&pad=`));
      },
      pull(controller) {
        if (pulled >= total || answeredAt !== null) return controller.close();
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const got = await browser
      .send('POST', '/lock', { body, headers: { 'content-type': FORM } })
      .then((r) => ({ status: r.status, code: codeOf(r.html) }))
      .catch((err: Error) => ({ status: 0, code: err.message }));
    answeredAt = pulled;
    expect(got).toEqual({ status: 413, code: 'BODY_TOO_LARGE' });
    // a bounded reader answers within the socket buffers of the limit (a few MiB on loopback),
    // not after the whole 16 MiB
    expect(answeredAt).toBeLessThan(8 * 1024 * 1024);
    expect(isLockedPage((await browser.get('/')).html)).toBe(false);
  });

  it('agent, reader and garbage tokens get 403 ROLE_FORBIDDEN on every view and post, even beside an unlocked cookie', async () => {
    const p = await propose();
    const csrf = await browser.csrf();
    const posts: Array<[string, Record<string, string>]> = [
      ['/unlock', { passphrase: OWNER_PASSPHRASE }],
      ['/lock', {}],
      [`/pile/${p}/approve`, { confirm: 'YES' }],
      [`/pile/${p}/reject`, {}],
      ['/pile/reject-night', { ids: p }],
      ['/ledger/none/settle', { verdict: 'stands', outcome: 'x' }],
    ];
    const before = await dumpStore(engine);
    const wrong: string[] = [];
    for (const secret of [owner.agent, owner.reader, 'ml_garbage', '']) {
      const authorization = `Bearer ${secret}`;
      for (const path of VIEWS) {
        const got = await browser.get(path, { authorization });
        if (got.status !== 403 || codeOf(got.html) !== 'ROLE_FORBIDDEN')
          wrong.push(`GET ${path} ${secret.slice(0, 6)} → ${got.status}`);
        if (got.html.includes('data-proposal=')) wrong.push(`GET ${path} showed the pile`);
      }
      for (const [path, fields] of posts) {
        const got = await browser.post(path, { ...fields, _csrf: csrf }, { authorization });
        if (got.status !== 403 || codeOf(got.html) !== 'ROLE_FORBIDDEN')
          wrong.push(`POST ${path} ${secret.slice(0, 6)} → ${got.status} ${codeOf(got.html)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(await dumpStore(engine)).toEqual(before);
    expect(isLockedPage((await browser.get('/')).html)).toBe(false);
  });

  it('a session that never unlocked: REVIEW_LOCKED on every decision, and its views show only the unlock form', async () => {
    const p = await propose({ text: 'The user drinks green tea, a secret of the pile.' });
    const r = await me.ledger.retract({
      claim: 'The door was locked.',
      stoodOn: 'a guess',
      whyWrong: 'nobody looked',
      corrected: 'The door was open.',
      procedure: 'look at the door',
      passObservation: 'open',
      overturnCondition: 'locked',
      dueDays: 0,
    });
    const stranger = new Visitor(base);
    const csrf = await stranger.csrf();
    const before = await dumpStore(engine);
    const decisions: Array<[string, Record<string, string>]> = [
      [`/pile/${p}/approve`, { confirm: 'YES' }],
      [`/pile/${p}/approve`, { confirm: 'no' }],
      [`/pile/${p}/reject`, {}],
      ['/pile/reject-night', { ids: p }],
      [`/ledger/${r.id}/settle`, { verdict: 'stands', outcome: 'open' }],
      [`/ledger/${r.id}/settle`, { runProbe: '1' }],
    ];
    for (const [path, fields] of decisions) {
      const got = await stranger.post(path, { ...fields, _csrf: csrf });
      expect([path, got.status, codeOf(got.html)]).toEqual([path, 401, 'REVIEW_LOCKED']);
      expect(isLockedPage(got.html)).toBe(true);
      expect(got.html).not.toContain('a secret of the pile');
    }
    // htmx: the page is sent to / to unlock, nothing swapped in
    const hx = await stranger.post(`/pile/${p}/reject`, { _csrf: csrf }, { 'hx-request': 'true' });
    expect(hx.status).toBe(204);
    expect(hx.headers.get('hx-redirect')).toBe('/');
    expect(hx.html).toBe('');
    // a visitor that never unlocked is kept nowhere (so no flood can evict the owner's form):
    // its next page is the unlock form
    const after = await stranger.get('/');
    expect(isLockedPage(after.html)).toBe(true);
    expect(await dumpStore(engine)).toEqual(before);
    expect(await status(p)).toBe('proposed');

    for (const path of [...VIEWS, '/?page=2', '/memory?slot=what_i_know_about_user']) {
      const got = await stranger.get(path);
      expect(got.status, path).toBe(200);
      expect(isLockedPage(got.html), path).toBe(true);
      expect(got.html, path).not.toContain('a secret of the pile');
      expect(got.html, path).not.toContain('<article');
      expect(got.html, path).not.toContain('The door was');
      expect(/<title>([^<]*)<\/title>/.exec(got.html)?.[1], path).toBe('memledger review: owner');
    }
  });

  it('unlocking rotates the session: the cookie from before is worth nothing after', async () => {
    const v = new Visitor(base);
    const csrfBefore = await v.csrf();
    const cookieBefore = v.cookie;
    const opened = await v.post('/unlock', { _csrf: csrfBefore, passphrase: OWNER_PASSPHRASE });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/');
    const cookieAfter = v.cookie;
    expect(cookieAfter).not.toBe(cookieBefore);
    const home = await v.get('/');
    expect(isLockedPage(home.html)).toBe(false);
    expect(flashOf(home.html)).toMatch(/^unlocked: the owner key is open for 10 idle minutes/);
    expect(csrfOf(home.html)).not.toBe(csrfBefore);
    // the old token does not carry over to the new session
    const stale = await v.post('/lock', { _csrf: csrfBefore });
    expect([stale.status, codeOf(stale.html)]).toEqual([403, 'CSRF_INVALID']);
    // the old cookie names only a locked visitor now
    const old = new Visitor(base);
    old.cookie = cookieBefore;
    const page = await old.get('/');
    expect(isLockedPage(page.html)).toBe(true);
    expect(old.cookie).not.toBe(cookieAfter);
    // a second unlock of an unlocked session rotates it again
    const again = await v.post('/unlock', {
      _csrf: csrfOf(home.html),
      passphrase: OWNER_PASSPHRASE,
    });
    expect(again.status).toBe(303);
    expect(v.cookie).not.toBe(cookieAfter);
    const behind = new Visitor(base);
    behind.cookie = cookieAfter;
    expect(isLockedPage((await behind.get('/')).html)).toBe(true);
  });

  it('a flood of new sessions does not push out the unlocked one', async () => {
    const v = await unlocked(base);
    for (let i = 0; i < 100; i += 1) await new Visitor(base).get('/');
    expect(isLockedPage((await v.get('/')).html)).toBe(false);
  });

  it('the lock button forgets the key: the same cookie sees the unlock form, and decisions are REVIEW_LOCKED', async () => {
    const v = await unlocked(base);
    const p = await propose();
    const csrf = await v.csrf();
    const locked = await v.post('/lock', { _csrf: csrf });
    expect(locked.status).toBe(303);
    const page = await v.get('/');
    expect(isLockedPage(page.html)).toBe(true);
    expect(flashOf(page.html)).toBe('locked: the owner key was forgotten');
    const got = await v.post(`/pile/${p}/approve`, { _csrf: csrf, confirm: 'YES' });
    expect([got.status, codeOf(got.html)]).toEqual([401, 'REVIEW_LOCKED']);
    expect(await status(p)).toBe('proposed');
  });

  it('a wrong passphrase is 401 BAD_PASSPHRASE naming the count and a doubling wait; the right one works and resets the count', async () => {
    const s = await extraServe({ subject: 'owner', keyFile: owner.keyPath, unlockDelayBaseMs: 20 });
    const a = new Visitor(s.url);
    const b = new Visitor(s.url);
    const tries: Array<[Visitor, string, string]> = [
      [a, 'wrong 1 time in a row', 'this one 0.02 s'],
      [a, 'wrong 2 times in a row', 'this one 0.04 s'],
      // one counter for the server: a new cookie does not reset it
      [b, 'wrong 3 times in a row', 'this one 0.08 s'],
    ];
    for (const [v, count, wait] of tries) {
      const got = await v.unlock('not the passphrase');
      expect(got.status).toBe(401);
      expect(codeOf(got.html)).toBe('BAD_PASSPHRASE');
      expect(flashOf(got.html)).toContain(count);
      expect(flashOf(got.html)).toContain(wait);
      expect(isLockedPage(got.html)).toBe(true);
    }
    const empty = await a.unlock('');
    expect([empty.status, codeOf(empty.html)]).toEqual([400, 'PASSPHRASE_REQUIRED']);
    expect(s.review.sessions.unlockedCount()).toBe(0);

    const opened = await a.unlock();
    expect(opened.status).toBe(303);
    expect(s.review.sessions.unlockedCount()).toBe(1);
    const next = await b.unlock('not it either');
    expect(flashOf(next.html)).toContain('wrong 1 time in a row');
    expect(flashOf(next.html)).toContain('this one 0.02 s');
  });

  it('a key file whose key is not the store’s is WRONG_KEY, and opens nothing', async () => {
    const other = join(mkdtempSync(join(tmpdir(), 'ml-other-key-')), 'owner.key');
    writeOwnerKeyFile(other, generateOwnerKey(OWNER_PASSPHRASE).keyFile);
    const s = await extraServe({ subject: 'owner', keyFile: other, unlockDelayBaseMs: 20 });
    const v = new Visitor(s.url);
    const got = await v.unlock();
    expect([got.status, codeOf(got.html)]).toEqual([409, 'WRONG_KEY']);
    expect(flashOf(got.html)).toContain(owner.signer.keyId);
    expect(s.review.sessions.unlockedCount()).toBe(0);
    expect(isLockedPage((await v.get('/')).html)).toBe(true);
  });

  it('with no key file the page says it cannot be unlocked, and /unlock is NO_OWNER_KEY', async () => {
    const s = await extraServe();
    const v = new Visitor(s.url);
    const page = await v.get('/');
    expect(page.status).toBe(200);
    expect(page.html).toContain('This page cannot be unlocked');
    expect(page.html).toContain('this server was started without an owner key file');
    expect(page.html).not.toContain('name="passphrase"');
    // the page offers no form; a post with the session's own token still opens nothing
    const csrf = s.review.sessions.session(v.cookie ?? undefined).csrf;
    const got = await v.post('/unlock', { _csrf: csrf, passphrase: OWNER_PASSPHRASE });
    expect([got.status, codeOf(got.html)]).toEqual([409, 'NO_OWNER_KEY']);
    expect(s.review.sessions.unlockedCount()).toBe(0);

    // a key file, but a store with no owner key for the subject yet
    await engine.subjects.create('keyless');
    const k = await extraServe({ subject: 'keyless', keyFile: owner.keyPath });
    const w = new Visitor(k.url);
    const none = await w.unlock();
    expect([none.status, codeOf(none.html)]).toEqual([409, 'NO_OWNER_KEY']);
    expect(k.review.sessions.unlockedCount()).toBe(0);
  });

  it('a retraction waiting for the owner is shown with the fact it takes down, and signed only with YES', async () => {
    const p = await propose();
    const csrf = await browser.csrf();
    expect((await browser.post(`/pile/${p}/approve`, { _csrf: csrf, confirm: 'YES' })).status).toBe(
      303,
    );
    const r = await me.ledger.retract({
      claim: 'The user sails on weekends.',
      stoodOn: 'one remark',
      whyWrong: 'the user sold the boat',
      corrected: 'The user no longer sails.',
      procedure: 'ask the user',
      passObservation: 'the user says the boat is sold',
      overturnCondition: 'the user says they sail',
      factId: p as FactId,
    });
    expect(await status(p)).toBe('active');
    const page = await browser.get('/');
    const card = page.html.slice(page.html.indexOf(`data-retraction="${r.id}"`));
    expect(card).toContain('“The user sails on weekends.” → now: “The user no longer sails.”');
    expect(card).toContain(`name="factId" value="${p}"`);
    // without YES, or for another fact than the one shown: refused, nothing signed
    const before = await dumpStore(engine);
    const noYes = await browser.post(`/retractions/${r.id}/sign`, { _csrf: csrf, factId: p });
    expect([noYes.status, codeOf(noYes.html)]).toEqual([400, 'CONFIRMATION_REQUIRED']);
    const other = await browser.post(`/retractions/${r.id}/sign`, {
      _csrf: csrf,
      factId: 'another-fact',
      confirm: 'YES',
    });
    expect([other.status, codeOf(other.html)]).toEqual([409, 'RETRACTION_CHANGED']);
    expect(await dumpStore(engine)).toEqual(before);
    const ok = await browser.post(`/retractions/${r.id}/sign`, {
      _csrf: csrf,
      factId: p,
      confirm: 'YES',
    });
    expect(ok.status).toBe(303);
    expect(await status(p)).toBe('retracted');
    const after = await browser.get('/');
    expect(after.html).not.toContain(`data-retraction="${r.id}"`);
    expect(flashOf(after.html)).toMatch(/^signed retraction .*: fact .* left live memory/);
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it('approving needs YES typed (trimmed, in capitals): anything else is CONFIRMATION_REQUIRED and changes nothing', async () => {
    const p = await propose();
    const csrf = await browser.csrf();
    const before = await dumpStore(engine);
    for (const confirm of [null, '', 'yes', 'Yes', 'YES!', 'Y E S', 'NO']) {
      const fields: Record<string, string> = { _csrf: csrf };
      if (confirm !== null) fields.confirm = confirm;
      const got = await browser.post(`/pile/${p}/approve`, fields);
      expect([confirm, got.status, codeOf(got.html)]).toEqual([
        confirm,
        400,
        'CONFIRMATION_REQUIRED',
      ]);
    }
    expect(await dumpStore(engine)).toEqual(before);
    expect(await status(p)).toBe('proposed');

    const ok = await browser.post(`/pile/${p}/approve`, { _csrf: csrf, confirm: ' YES ' });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/');
    expect(await status(p)).toBe('active');
    expect((await me.facts.live()).map((f) => f.id)).toContain(p);
    const home = await browser.get('/');
    expect(flashOf(home.html)).toMatch(/^approved: now active \(decision #\d+, signed\)$/);
    expect((await me.owner.verifyChain()).ok).toBe(true);
    // decided once: approving again is NOT_PENDING, not a second decision
    const twice = await browser.post(`/pile/${p}/approve`, { _csrf: csrf, confirm: 'YES' });
    expect([twice.status, codeOf(twice.html)]).toEqual([409, 'NOT_PENDING']);
  });

  it('htmx: a decision answers the decided card, the out-of-band badge and the title; an error the flash box; REVIEW_LOCKED a redirect', async () => {
    const p = await propose();
    const q = await propose();
    const csrf = await browser.csrf();
    const hx = { 'hx-request': 'true' };
    const approved = await browser.post(`/pile/${p}/approve`, { _csrf: csrf, confirm: 'YES' }, hx);
    expect(approved.status).toBe(200);
    const left = (await me.gate.pile()).length;
    expect(cardIds(approved.html)).toEqual([p]);
    expect(approved.html).toContain('class="proposal decided"');
    expect(flashOf(approved.html)).toMatch(/^approved: now active/);
    const badge = /<span\s+id="pile-badge"[^>]*>(\d+)<\/span/.exec(approved.html);
    expect(badge?.[0]).toContain('hx-swap-oob="true"');
    expect(badge?.[1]).toBe(String(left));
    expect(/<title>\s*([^<]*?)\s*<\/title>/.exec(approved.html)?.[1]).toBe(
      left === 0 ? 'memledger review: owner' : `(${left}) memledger review: owner`,
    );
    expect(approved.html).not.toContain('<html');

    const rejected = await browser.post(`/pile/${q}/reject`, { _csrf: csrf }, hx);
    expect(rejected.status).toBe(200);
    expect(flashOf(rejected.html)).toMatch(/^rejected: now rejected/);
    expect(rejected.html).toContain(`>${left - 1}</span`);
    expect(await status(q)).toBe('rejected');

    const r = await propose();
    const refused = await browser.post(`/pile/${r}/approve`, { _csrf: csrf, confirm: 'yes' }, hx);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('hx-retarget')).toBe('#flash');
    expect(refused.headers.get('hx-reswap')).toBe('outerHTML');
    expect(refused.html.trimStart()).toMatch(/^<div id="flash"/);
    expect(flashOf(refused.html)).toMatch(/^CONFIRMATION_REQUIRED: /);
    expect(refused.html).not.toContain('<html');
    const forged = await browser.post(`/pile/${r}/reject`, { _csrf: 'forged' }, hx);
    expect([forged.status, forged.headers.get('hx-retarget')]).toEqual([403, '#flash']);
    expect(flashOf(forged.html)).toMatch(/^CSRF_INVALID: /);
    expect(await status(r)).toBe('proposed');
    // the error went to the partial, not to the next page as well
    expect(flashOf((await browser.get('/')).html)).toBe('');
  });

  it('htmx: a decided card sends back its night as the page showed it, less what is decided, and empties the flash box', async () => {
    const a = await propose();
    const b = await propose();
    const page = await browser.get('/');
    const day = /id="night-(\d{4}-\d{2}-\d{2})"/u.exec(page.html)?.[1] ?? '';
    expect(day).not.toBe('');
    const late = await propose(); // arrived after the page was shown: never added to its night
    const csrf = await browser.csrf();
    const hx = { 'hx-request': 'true' };
    const fields: Array<[string, string]> = [
      ['_csrf', csrf],
      ['day', day],
      ['ids', a],
      ['ids', b],
    ];
    const r = await browser.post(`/pile/${a}/reject`, fields, hx);
    expect(r.status).toBe(200);
    const head =
      /<div class="night-head" id="night-[^"]*"[^>]*>[\s\S]*?<\/div>/u.exec(r.html)?.[0] ?? '';
    expect(head).toContain(`id="night-${day}"`);
    expect(head).toContain('hx-swap-oob="true"');
    expect(head).toContain('(1 waiting)');
    expect(head).toContain(`name="ids" value="${b}"`);
    expect(head).not.toContain(`value="${a}"`);
    expect(head).not.toContain(`value="${late}"`);
    expect(head.replace(/\s+/gu, ' ')).toContain(`Reject all 1 from ${day}`);
    // the flash box, out of band and empty: an earlier card's error is over
    const box = /<div id="flash"[^>]*>([\s\S]*?)<\/div>/u.exec(r.html);
    expect(box?.[0]).toContain('hx-swap-oob="true"');
    expect(box?.[1]?.trim()).toBe('');
    // negative control: a night named badly is not sent back at all
    const bad = await browser.post(`/pile/${b}/reject`, { _csrf: csrf, day: 'x', ids: b }, hx);
    expect(bad.status).toBe(200);
    expect(bad.html).not.toContain('class="night-head"');
  });

  it('NEWER_VALUE_LIVE: the older of two values for one key is refused while the newer is live, unless supersede=1', async () => {
    const older = await propose({ key: 'city', text: 'The user lives in Porto.' });
    await sleep(10);
    const newer = await propose({ key: 'city', text: 'The user lives in Lisbon.' });
    const csrf = await browser.csrf();
    expect(
      (await browser.post(`/pile/${newer}/approve`, { _csrf: csrf, confirm: 'YES' })).status,
    ).toBe(303);
    const page = await browser.get('/');
    const card = page.html.slice(page.html.indexOf(`data-proposal="${older}"`));
    const end = card.indexOf('</article>');
    expect(card.slice(0, end)).toContain('name="supersede" value="1"');
    expect(card.slice(0, end)).toMatch(
      /replace the newer live value\s+“The user lives in Lisbon\.”\s+with this older one/,
    );

    const before = await dumpStore(engine);
    const refused = await browser.post(`/pile/${older}/approve`, { _csrf: csrf, confirm: 'YES' });
    expect([refused.status, codeOf(refused.html)]).toEqual([409, 'NEWER_VALUE_LIVE']);
    const off = await browser.post(`/pile/${older}/approve`, {
      _csrf: csrf,
      confirm: 'YES',
      supersede: '0',
    });
    expect([off.status, codeOf(off.html)]).toEqual([409, 'NEWER_VALUE_LIVE']);
    expect(await dumpStore(engine)).toEqual(before);
    expect(await status(newer)).toBe('active');

    const meant = await browser.post(`/pile/${older}/approve`, {
      _csrf: csrf,
      confirm: 'YES',
      supersede: '1',
    });
    expect(meant.status).toBe(303);
    expect(await status(older)).toBe('active');
    expect(await status(newer)).toBe('superseded');
    const city = (await me.facts.live()).filter((f) => f.key === 'city');
    expect(city.map((f) => f.id)).toEqual([older]);

    // a value newer than the live one replaces it without a box: the card says so in words
    const newest = await propose({ key: 'city', text: 'The user lives in Faro.' });
    const later = await browser.get('/');
    const newestCard = later.html.slice(later.html.indexOf(`data-proposal="${newest}"`));
    const until = newestCard.indexOf('</article>');
    expect(newestCard.slice(0, until)).toMatch(
      /approving replaces the live value\s+“The user lives in Porto\.”/,
    );
    expect(newestCard.slice(0, until)).not.toContain('name="supersede"');
    const replaced = await browser.post(`/pile/${newest}/approve`, {
      _csrf: await browser.csrf(),
      confirm: 'YES',
    });
    expect(replaced.status).toBe(303);
    expect(flashOf((await browser.get('/')).html)).toContain(`it replaced fact ${older}`);
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it('pages the pile: page 1 and 2 differ, past the end is the last page, a bad page is page 1, with pager links', async () => {
    await engine.subjects.create('paged');
    const paged = engine.subject('paged');
    await paged.owner.setKey({
      keyId: owner.signer.keyId,
      publicKeyPem: owner.signer.publicKeyPem,
    });
    const session = (await paged.sessions.create({ title: 'pages' })).id;
    await paged.turns.add({ sessionId: session, role: 'user', content: TURN });
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push(await propose({ who: paged, session }));
    const s = await extraServe({ subject: 'paged', keyFile: owner.keyPath, pageSize: 2 });
    const v = await unlocked(s.url);
    const shown = async (q: string) => {
      const page = await v.get(`/${q}`);
      expect(page.status, q).toBe(200);
      return { ids: cardIds(page.html), html: page.html };
    };
    const p1 = await shown('?page=1');
    const p2 = await shown('?page=2');
    const p3 = await shown('?page=3');
    expect(p1.ids).toHaveLength(2);
    expect(p2.ids).toHaveLength(2);
    expect(p3.ids).toHaveLength(1);
    expect(new Set([...p1.ids, ...p2.ids, ...p3.ids])).toEqual(new Set(ids));
    expect(p1.html).toContain('page 1 of 3');
    expect(p1.html).toContain('href="/?page=2" rel="next"');
    expect(p1.html).not.toContain('rel="prev"');
    expect(p2.html).toContain('href="/?page=1" rel="prev"');
    expect(p2.html).toContain('href="/?page=3" rel="next"');
    expect(p3.html).toContain('href="/?page=2" rel="prev"');
    expect(p3.html).not.toContain('rel="next"');
    // the night's reject-all names only the proposals this page shows
    const night = [...p2.html.matchAll(/name="ids" value="([^"]+)"/g)].map((m) => m[1]);
    expect(night).toEqual(p2.ids);

    const past = await shown('?page=99');
    expect(past.ids).toEqual(p3.ids);
    expect(past.html).toContain('page 3 of 3');
    for (const q of ['?page=abc', '?page=0', '?page=-2', '?page=1.5', '?page=', '']) {
      const got = await shown(q);
      expect(got.ids, q).toEqual(p1.ids);
      expect(got.html, q).toContain('page 1 of 3');
    }
  });

  it('reject-night skips unknown ids, another subject’s and decided ones, rejects the rest, and refuses 0 or over 1000 ids', async () => {
    const mine = [await propose(), await propose()];
    const decided = await propose();
    const csrf = await browser.csrf();
    await browser.post(`/pile/${decided}/reject`, { _csrf: csrf });
    const foreign = await propose({ who: bob });
    const fields: Array<[string, string]> = [
      ['_csrf', csrf],
      ['day', '2026-05-01'],
      ['ids', mine[0] ?? ''],
      ['ids', 'no-such-proposal'],
      ['ids', foreign],
      ['ids', decided],
      ['ids', mine[1] ?? ''],
      ['ids', mine[0] ?? ''],
    ];
    const got = await browser.post('/pile/reject-night', fields);
    expect(got.status).toBe(303);
    expect(flashOf((await browser.get('/')).html)).toBe(
      'rejected 2 proposals from 2026-05-01 (3 skipped: already decided, or not in this pile), each signed',
    );
    for (const id of mine) expect(await status(id)).toBe('rejected');
    expect((await bob.facts.get(foreign as FactId)).status).toBe('proposed');
    expect((await me.owner.verifyChain()).ok).toBe(true);

    const p = await propose();
    const before = await dumpStore(engine);
    const many: Array<[string, string]> = [['_csrf', csrf]];
    for (let i = 0; i < 1_001; i += 1) many.push(['ids', `x${i}`]);
    many.push(['ids', p]);
    const tooMany = await browser.post('/pile/reject-night', many);
    expect([tooMany.status, codeOf(tooMany.html)]).toEqual([400, 'INVALID_ARGUMENT']);
    const none = await browser.post('/pile/reject-night', { _csrf: csrf, day: '2026-05-01' });
    expect([none.status, codeOf(none.html)]).toEqual([400, 'INVALID_ARGUMENT']);
    expect(await dumpStore(engine)).toEqual(before);
    expect(await status(p)).toBe('proposed');
    // 1000 named, duplicates counted once: read, and the one real id rejected
    const exactly: Array<[string, string]> = [
      ['_csrf', csrf],
      ['ids', p],
      ['ids', p],
    ];
    for (let i = 0; i < 999; i += 1) exactly.push(['ids', `x${i}`]);
    const edge = await browser.post('/pile/reject-night', exactly);
    expect(edge.status).toBe(303);
    expect(await status(p)).toBe('rejected');
  });

  it('a malformed proposal or retraction id is a clear refusal, never a store failure', async () => {
    const csrf = await browser.csrf();
    const p = await propose();
    const bad = ['%00', encodeURIComponent('x'.repeat(5_000)), '%ED%A0%80', '..%2F..%2Fetc'];
    const wrong: string[] = [];
    for (const id of bad) {
      for (const [path, fields] of [
        [`/pile/${id}/approve`, { confirm: 'YES' }],
        [`/pile/${id}/reject`, {}],
        [`/ledger/${id}/settle`, { verdict: 'stands', outcome: 'x' }],
      ] as const) {
        const got = await browser.post(path, { ...fields, _csrf: csrf });
        if (got.status >= 500 || got.status < 400)
          wrong.push(`${path.slice(0, 40)} → ${got.status} ${codeOf(got.html)}`);
      }
    }
    // in a night: a malformed id after a known one must not leave the known one rejected
    // behind a failure (each rejection commits on its own)
    const night = await browser.post('/pile/reject-night', [
      ['_csrf', csrf],
      ['ids', p],
      ['ids', '\u0000'],
    ]);
    const after = await status(p);
    if (!(night.status === 303 || (night.status === 400 && after === 'proposed')))
      wrong.push(
        `reject-night [known, NUL] → ${night.status} ${codeOf(night.html)}, known ${after}`,
      );
    expect(wrong).toEqual([]);
  });

  it('hostile text in a proposal, its cited turn, its key and proposedBy reaches the HTML escaped only', async () => {
    const session = (await me.sessions.create({ title: `hostile ${SCRIPT}` })).id;
    await me.turns.add({
      sessionId: session,
      role: 'user',
      content: `before ${SCRIPT} ${JS_LINK}`,
    });
    await me.turns.add({ sessionId: session, role: 'user', content: HOSTILE });
    await me.turns.add({ sessionId: session, role: 'assistant', content: `after ${BREAKOUT}` });
    const r = await me.gate.propose({
      sessionId: session,
      proposedBy: `agent ${BREAKOUT} ${SCRIPT}`,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          key: `k ${BREAKOUT} ${SCRIPT}`,
          text: HOSTILE,
          origin: 'saw',
          evidence: { turn: 2, quote: `Payday is Friday ${SCRIPT}` },
        },
      ],
    });
    const id = r.proposed[0]?.id;
    if (id === undefined) throw new Error(`dropped: ${JSON.stringify(r.dropped)}`);
    const pile = await browser.get('/');
    expect(cardIds(pile.html)).toContain(id);
    expect(inertProblems(pile.html)).toEqual([]);
    expect(pile.html).toContain('&lt;script&gt;window.__pwned=1&lt;/script&gt;');
    expect(pile.html).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(pile.html).toContain(`agent &quot;&gt;&lt;img`); // proposedBy
    expect(pile.html).toContain(`(key k &quot;&gt;&lt;img`); // the key
    expect(pile.html).toContain('after &quot;&gt;&lt;img'); // a context turn
    expect(pile.html).not.toContain(BREAKOUT);
    expect(pile.html).not.toContain(SCRIPT);

    const csrf = csrfOf(pile.html);
    const hx = await browser.post(
      `/pile/${id}/approve`,
      { _csrf: csrf, confirm: 'YES' },
      {
        'hx-request': 'true',
      },
    );
    expect(hx.status).toBe(200);
    expect(inertProblems(hx.html)).toEqual([]);
    expect(hx.html).not.toContain(SCRIPT);
    for (const path of ['/memory', '/memory?slot=what_i_know_about_user', '/chain']) {
      const page = await browser.get(path);
      expect(page.status, path).toBe(200);
      expect(inertProblems(page.html), path).toEqual([]);
      expect(page.html, path).not.toContain(SCRIPT);
      expect(page.html, path).not.toContain(BREAKOUT);
    }
    const memory = (await browser.get('/memory')).html;
    expect(memory).toContain('&lt;script&gt;window.__pwned=1&lt;/script&gt;');

    // hostile text the page is sent back: a query value, a path id, a field name, a day
    const echoes: Reply[] = [
      await browser.get(`/memory?slot=${encodeURIComponent(BREAKOUT)}`),
      await browser.get(`/arrivals?surface=${encodeURIComponent(SCRIPT)}`),
      await browser.post(`/pile/${encodeURIComponent(SCRIPT)}/reject`, { _csrf: csrf }),
      await browser.post(
        `/pile/${encodeURIComponent(BREAKOUT)}/reject`,
        { _csrf: csrf },
        {
          'hx-request': 'true',
        },
      ),
      await browser.post('/lock', [
        ['_csrf', csrf],
        [BREAKOUT, '1'],
        [BREAKOUT, '2'],
      ]),
      await browser.post(`/ledger/${encodeURIComponent(SCRIPT)}/settle`, {
        _csrf: csrf,
        verdict: SCRIPT,
      }),
    ];
    const reject = await me.gate.pile();
    const night = await browser.post('/pile/reject-night', {
      _csrf: csrf,
      day: `${SCRIPT}`,
      ids: reject[0]?.fact.id ?? 'none',
    });
    expect(night.status).toBe(303);
    echoes.push(await browser.get('/'));
    for (const e of echoes) {
      expect(e.status).toBeLessThan(500);
      expect(inertProblems(e.html)).toEqual([]);
      expect(e.html).not.toContain(SCRIPT);
      expect(e.html).not.toContain(BREAKOUT);
    }
    expect(echoes[2]?.html).toContain('no proposal &quot;&lt;script&gt;');
    expect(echoes[3]?.headers.get('hx-retarget')).toBe('#flash');
    expect(isLockedPage((await browser.get('/')).html)).toBe(false);
  });

  it('serves htmx and the stylesheet itself, typed, with an ETag and 304; the pages load nothing from elsewhere', async () => {
    for (const [path, type, min] of [
      ['/assets/htmx.min.js', 'text/javascript; charset=utf-8', 10_000],
      ['/assets/review.css', 'text/css; charset=utf-8', 500],
    ] as const) {
      const res = await fetch(new URL(path, base));
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toBe(type);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      const etag = res.headers.get('etag');
      expect(etag, path).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect((await res.text()).length, path).toBeGreaterThan(min);
      const again = await fetch(new URL(path, base), { headers: { 'if-none-match': etag ?? '' } });
      expect(again.status, path).toBe(304);
      expect(await again.text(), path).toBe('');
      expect(again.headers.get('etag'), path).toBe(etag);
      const stale = await fetch(new URL(path, base), { headers: { 'if-none-match': '"stale"' } });
      expect(stale.status, path).toBe(200);
      await stale.arrayBuffer();
    }
    const pages = [
      ...(await Promise.all(VIEWS.map(async (v) => (await browser.get(v)).html))),
      (await new Visitor(base).get('/')).html,
    ];
    for (const html of pages) {
      expect(html).toContain('<link rel="stylesheet" href="/assets/review.css" />');
      expect(html).toContain('<script src="/assets/htmx.min.js" defer></script>');
      expect(html).not.toMatch(/(?:src|href|action)="(?:https?:)?\/\//i);
      expect(inertProblems(html)).toEqual([]);
    }
  });

  // the passphrase would cross the network in the clear: only a loopback peer may unlock
  it.skipIf(EXTERNAL_IP === undefined)(
    'refuses to unlock from a peer that is not this machine (REMOTE_NOT_ALLOWED), and opens nothing',
    async () => {
      const ip = EXTERNAL_IP ?? '';
      const s = await startServe({
        engine,
        port: 0,
        host: '0.0.0.0',
        allowRemote: true,
        allowedHosts: [ip],
        review: { subject: 'owner', keyFile: owner.keyPath, unlockDelayBaseMs: 20 },
      });
      servers.push(s);
      const remote = new Visitor(`http://${ip}:${s.port}/`);
      const got = await remote.unlock();
      expect([got.status, codeOf(got.html)]).toEqual([403, 'REMOTE_NOT_ALLOWED']);
      expect(s.review.sessions.unlockedCount()).toBe(0);
      // the positive control: the same server, from loopback
      expect((await new Visitor(`http://127.0.0.1:${s.port}/`).unlock()).status).toBe(303);
    },
  );

  it('a flood of cookieless visitors never invalidates the owner’s unlock form', async () => {
    const s = await extraServe({ subject: 'owner', keyFile: owner.keyPath, unlockDelayBaseMs: 20 });
    const ownerTab = new Visitor(s.url);
    const csrf = await ownerTab.csrf();
    for (let i = 0; i < 200; i += 1) await new Visitor(s.url).get('/');
    const opened = await ownerTab.post('/unlock', { _csrf: csrf, passphrase: OWNER_PASSPHRASE });
    expect(opened.status).toBe(303);
    // the negative control: a token made for another cookie id is still refused
    const other = new Visitor(s.url);
    await other.get('/');
    const forged = await other.post('/unlock', { _csrf: csrf, passphrase: OWNER_PASSPHRASE });
    expect([forged.status, codeOf(forged.html)]).toEqual([403, 'CSRF_INVALID']);
  });

  it('a try during the wait after a wrong passphrase is refused at once (UNLOCK_THROTTLED), not queued', async () => {
    const s = await extraServe({
      subject: 'owner',
      keyFile: owner.keyPath,
      unlockDelayBaseMs: 1_500,
    });
    const a = new Visitor(s.url);
    const b = new Visitor(s.url);
    const [csrfA, csrfB] = [await a.csrf(), await b.csrf()];
    const wrong = a.post('/unlock', { _csrf: csrfA, passphrase: 'not it' });
    await new Promise((r) => setTimeout(r, 600)); // scrypt done, the wait running
    const during = await b.post('/unlock', { _csrf: csrfB, passphrase: OWNER_PASSPHRASE });
    expect([during.status, codeOf(during.html)]).toEqual([429, 'UNLOCK_THROTTLED']);
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(s.review.sessions.unlockedCount()).toBe(0);
    expect((await wrong).status).toBe(401);
    const after = await b.post('/unlock', { _csrf: csrfB, passphrase: OWNER_PASSPHRASE });
    expect(after.status).toBe(303);
  });

  it('a request another site made uses no session: no key kept open, no cookie replaced', async () => {
    const v = await unlocked(base);
    for (const site of ['same-site', 'cross-site']) {
      const got = await v.get('/', { 'sec-fetch-site': site });
      expect(isLockedPage(got.html), site).toBe(true);
      expect(got.setCookie, site).toBeNull();
    }
    // the positive control: the same request from the page itself is the owner's
    expect(isLockedPage((await v.get('/', { 'sec-fetch-site': 'same-origin' })).html)).toBe(false);
  });

  it('shows characters a reader does not see in a cited turn as their code points (⟨U+202E⟩), and the world time a fact claims', async () => {
    const added = await me.turns.add({
      sessionId,
      role: 'user',
      content: 'My account is \u202E8765-4321\u202C and I moved on 3 May.',
    });
    if (!added.recorded) throw new Error('not recorded');
    const r = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user moved house.',
          origin: 'saw',
          evidence: { turn: added.turn.seq, quote: 'I moved on 3 May' },
          validFrom: '2015-05-03',
        },
      ],
    });
    const id = r.proposed[0]?.id ?? '';
    const html = (await browser.get('/?page=1')).html + (await browser.get('/?page=2')).html;
    const card = html.slice(html.indexOf(`data-proposal="${id}"`));
    expect(card).toContain('⟨U+202E⟩8765-4321⟨U+202C⟩');
    expect(card).not.toContain('\u202E');
    expect(card).toMatch(/holds from <strong>2015-05-03/);
    await browser.post(`/pile/${id}/reject`, { _csrf: await browser.csrf() });
  });
});

describe('the checks this file leans on', () => {
  it('inertProblems finds a live script, element, handler and link: a negative control', () => {
    const live = `<p>${HOSTILE}</p><p title="x" onclick="go()">y</p><script>1</script>`;
    const found = inertProblems(live).join('\n');
    for (const what of ['script: <script>', 'an <img>', 'handler', 'a link off the page']) {
      expect(found).toContain(what);
    }
    expect(inertProblems('<a href="https://cdn.example/x.js">x</a>').join()).toContain('off-page');
    expect(inertProblems('<p class="claim">&lt;script&gt; onerror=1</p>')).toEqual([]);
  });

  it('codeOf reads the flash code of a page and nothing else', () => {
    expect(codeOf('<p class="flash error" role="status">CSRF_INVALID: no</p>')).toBe(
      'CSRF_INVALID',
    );
    expect(codeOf('<p class="flash ok" role="status">CSRF_INVALID: no</p>')).toBeNull();
    expect(codeOf('<p class="claim">CSRF_INVALID: no</p>')).toBeNull();
  });
});
