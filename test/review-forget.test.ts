/**
 * Forgetting on the owner's review page, over plain HTTP (no browser): the dry run read before
 * YES (a fact, a turn, a session, a phrase), the signed forget, the plan digest that refuses a
 * plan changed since it was read, FORGET_CITED and its with-facts box, the agents' forget
 * requests honoured or declined from the pile, and History with its tombstones and pages. Every
 * refusal changes nothing (the whole store dumped before and after).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningServe } from '../server/serve.js';
import type { Engine, FactId, SubjectHandle } from '../src/index.js';
import { dumpStore } from './support/dump-store.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { makeOwnerSigner, OWNER_PASSPHRASE, ownerWithTokens } from './support/tokens.js';

const OWNER_KEY = makeOwnerSigner();
const { signer } = OWNER_KEY;
const FORM = 'application/x-www-form-urlencoded';
const TEA = 'I drink green tea every morning. My sister Ana lives in Porto.';

interface Reply {
  status: number;
  html: string;
  location: string | null;
}

/** A browser reduced to one cookie and forms; redirects are not followed. */
class Visitor {
  cookie: string | null = null;
  constructor(private readonly base: string) {}

  async send(method: 'GET' | 'POST', path: string, body?: string): Promise<Reply> {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': FORM };
    if (this.cookie !== null) headers.cookie = `memledger_review=${this.cookie}`;
    const res = await fetch(new URL(path, this.base), {
      method,
      headers,
      redirect: 'manual',
      ...(body === undefined ? {} : { body }),
    });
    const set = res.headers.getSetCookie().find((c) => c.startsWith('memledger_review='));
    if (set !== undefined) this.cookie = /^[^=]+=([^;]*)/.exec(set)?.[1] ?? null;
    return { status: res.status, html: await res.text(), location: res.headers.get('location') };
  }

  get = (path: string) => this.send('GET', path);
  post = (path: string, fields: Record<string, string>) =>
    this.send('POST', path, new URLSearchParams(fields).toString());

  async csrf(): Promise<string> {
    const m = /name="_csrf" value="([^"]+)"/.exec((await this.get('/')).html);
    if (m?.[1] === undefined) throw new Error('no CSRF field');
    return m[1];
  }
}

/** The flash text of a page (`CODE: message` for an error). */
const flashOf = (html: string) =>
  /class="flash (?:ok|error)" role="status">([^<]*)</.exec(html)?.[1]?.trim() ?? '';
/** The hidden fields of the dry run's forget form. */
function planForm(html: string): Record<string, string> {
  const form = /<form method="post" action="[^"]*" class="forget">([\s\S]*?)<\/form>/.exec(html);
  if (form?.[1] === undefined) throw new Error('the page holds no forget form');
  return Object.fromEntries(
    [...form[1].matchAll(/type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [
      m[1] ?? '',
      (m[2] ?? '').replace(/&amp;/g, '&').replace(/&quot;/g, '"'),
    ]),
  );
}

describe.each(ENGINES)('forgetting on the review page [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let me: SubjectHandle;
  let serve: RunningServe;
  let owner: Visitor;
  let csrf: string;

  /** A session with one user turn (TEA) and an approved fact quoting it. */
  async function teaSession(text = 'The user drinks green tea every morning.') {
    const sessionId = (await me.sessions.create({ title: 'tea' })).id;
    await me.turns.add({ sessionId, role: 'user', content: TEA });
    await me.turns.add({
      sessionId,
      role: 'assistant',
      content: 'Noted.',
      receipt: { noTools: true },
    });
    const r = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text,
          origin: 'saw',
          evidence: { turn: 1, quote: 'I drink green tea every morning' },
        },
      ],
    });
    const id = r.proposed[0]?.id as FactId;
    await me.owner.decide({ proposalId: id, decision: 'approve', signer });
    return { sessionId, factId: id };
  }

  /** Every post refused with `code`, and the store exactly as it was. */
  async function refusedUnchanged(
    code: string,
    posts: Array<[string, Record<string, string>]>,
  ): Promise<void> {
    const before = await dumpStore(engine);
    for (const [path, fields] of posts) {
      const r = await owner.post(path, fields);
      expect(flashOf(r.html), path).toMatch(new RegExp(`^${code}:`));
    }
    expect(await dumpStore(engine)).toEqual(before);
  }

  beforeAll(async () => {
    t = await openTestEngine(kind, { arrival: { timeZone: 'UTC' } });
    engine = t.engine;
    const o = await ownerWithTokens(engine, 'owner', OWNER_KEY);
    me = engine.subject('owner');
    serve = await startServe({
      engine,
      port: 0,
      review: { subject: 'owner', keyFile: o.keyPath, unlockDelayBaseMs: 20 },
    });
    owner = new Visitor(serve.url);
    const r = await owner.post('/unlock', {
      _csrf: await owner.csrf(),
      passphrase: OWNER_PASSPHRASE,
    });
    expect(r.status).toBe(303);
    csrf = await owner.csrf();
  });

  afterAll(async () => {
    await serve?.close();
    await t?.close();
  });

  it('forgets a live fact: the dry run names it and counts it, YES signs it, and it is gone', async () => {
    const { factId } = await teaSession();
    const dry = await owner.get(`/forget?kind=fact&fact=${factId}`);
    expect(dry.status).toBe(200);
    expect(dry.html).toContain('The user drinks green tea every morning.');
    expect(dry.html).toMatch(/<strong id="plan-counts">1 fact<\/strong>/);
    const fields = planForm(dry.html);
    expect(fields).toMatchObject({ kind: 'fact', fact: factId });
    // no YES: nothing changes
    await refusedUnchanged('CONFIRMATION_REQUIRED', [['/forget', { _csrf: csrf, ...fields }]]);
    const links = (await me.owner.verifyChain()).length;
    const done = await owner.post('/forget', { _csrf: csrf, ...fields, confirm: 'YES' });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/memory');
    expect(flashOf((await owner.get('/memory')).html)).toMatch(/^forgot 1 fact \(decision #\d+/);
    expect((await me.facts.live()).map((f) => f.id)).not.toContain(factId);
    const chain = await me.owner.verifyChain();
    expect(chain).toMatchObject({ ok: true, length: links + 1 });
  });

  it('a plan that changed since the page showed it is refused, and nothing is forgotten', async () => {
    const { sessionId } = await teaSession('The user likes green tea.');
    const dry = await owner.get(`/forget?kind=session&session=${sessionId}`);
    const fields = planForm(dry.html);
    expect(dry.html).toContain('2 turns');
    await me.turns.add({ sessionId, role: 'user', content: 'One more thing.' });
    await refusedUnchanged('CONFIRMATION_REQUIRED', [
      ['/forget', { _csrf: csrf, ...fields, withFacts: '1', confirm: 'YES' }],
      ['/forget', { _csrf: csrf, ...fields, plan: '', withFacts: '1', confirm: 'YES' }],
    ]);
  });

  it('a turn a live fact rests on: the dry run lists the fact with a box; without it FORGET_CITED, with it both go', async () => {
    const { sessionId, factId } = await teaSession('The user has green tea in the morning.');
    const dry = await owner.get(`/forget?kind=turn&session=${sessionId}&seq=1`);
    expect(dry.html).toContain('1 live fact rests on it');
    expect(dry.html).toContain(`data-fact="${factId}"`);
    expect(dry.html).toContain('name="withFacts"');
    const fields = planForm(dry.html);
    await refusedUnchanged('FORGET_CITED', [
      ['/forget', { _csrf: csrf, ...fields, confirm: 'YES' }],
    ]);
    const r = await owner.post('/forget', {
      _csrf: csrf,
      ...fields,
      withFacts: '1',
      confirm: 'YES',
    });
    expect(r.location).toBe(`/history/${sessionId}`);
    const page = await owner.get(r.location ?? '');
    expect(flashOf(page.html)).toMatch(/^forgot 1 turn and 1 fact/);
    const [turn] = await me.history.turns(sessionId, { from: 1, to: 1 });
    expect(turn?.forgotten).toBeDefined();
    // History shows the tombstone line in its place, and no Forget link for it
    const day = turn?.forgotten?.at.toISOString().slice(0, 10) ?? '';
    expect(page.html).toContain(
      `<span class="tombstone">[turn 1: forgotten by the owner on ${day}]</span>`,
    );
    expect(page.html).not.toContain('I drink green tea');
    expect(page.html).not.toContain(`seq=1"`);
    expect((await me.facts.live()).map((f) => f.id)).not.toContain(factId);
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it('a phrase: never in an address; the posted dry run counts what holds it; YES forgets it everywhere', async () => {
    const sessionId = (await me.sessions.create({ title: 'plans' })).id;
    await me.turns.add({
      sessionId,
      role: 'user',
      content: 'The spare key is under the blue pot.',
    });
    await me.turns.add({ sessionId, role: 'user', content: 'Lunch at noon. Blue pot, remember.' });
    const inUrl = await owner.get('/forget?kind=phrase&phrase=blue+pot');
    expect(flashOf(inUrl.html)).toMatch(/^INVALID_ARGUMENT: scope: a phrase is sent by the form/);
    await refusedUnchanged('INVALID_ARGUMENT', [
      ['/forget/plan', { _csrf: csrf, kind: 'phrase', phrase: 'bl' }],
      ['/forget/plan', { _csrf: csrf, kind: 'subject' }],
      ['/forget/plan', { _csrf: csrf, kind: 'everything' }],
      ['/forget/plan', { _csrf: csrf, kind: 'turn', session: sessionId, seq: 'one' }],
    ]);
    const dry = await owner.post('/forget/plan', {
      _csrf: csrf,
      kind: 'phrase',
      phrase: 'BLUE  pot',
    });
    expect(dry.status).toBe(200);
    expect(dry.html).toMatch(/<strong id="plan-counts">2 turns<\/strong>/);
    expect(dry.html).toContain(`session <code>${sessionId}</code>: turns 1–2`);
    const r = await owner.post('/forget', { _csrf: csrf, ...planForm(dry.html), confirm: 'YES' });
    expect(r.location).toBe('/history');
    const turns = await me.history.turns(sessionId);
    expect(turns.every((x) => x.forgotten !== undefined)).toBe(true);
    expect(turns.map((x) => x.content).join(' ')).not.toMatch(/blue pot/i);
  });

  it('bad scopes and unknown ids are clear refusals with a code', async () => {
    const bad = [
      ['/forget?kind=fact&fact=f_nope', 'FACT_NOT_FOUND'],
      ['/forget?kind=session&session=nope', 'SESSION_NOT_FOUND'],
      ['/forget?kind=turn&session=nope&seq=0', 'INVALID_ARGUMENT'],
      ['/forget?kind=', 'INVALID_ARGUMENT'],
      ['/forget/request/r_nope', 'FORGET_REQUEST_NOT_FOUND'],
      ['/history/no-such-session', 'SESSION_NOT_FOUND'],
    ] as const;
    for (const [path, code] of bad) {
      const r = await owner.get(path);
      expect(flashOf(r.html), path).toMatch(new RegExp(`^${code}:`));
      expect(r.status, path).toBeGreaterThanOrEqual(400);
    }
    await refusedUnchanged('FORGET_REQUEST_NOT_FOUND', [
      ['/forget/request/r_nope/decline', { _csrf: csrf }],
      ['/forget/request/r_nope', { _csrf: csrf, confirm: 'YES', plan: 'x' }],
    ]);
  });

  it("an agent's forget request waits on the pile with the user's words; reviewed, YES honours it; another is declined", async () => {
    const sessionId = (await me.sessions.create({ title: 'forget me' })).id;
    await me.turns.add({ sessionId, role: 'user', content: 'My PIN is 4921.' });
    await me.turns.add({ sessionId, role: 'user', content: 'Please forget my PIN, and the cat.' });
    const pin = await me.gate.requestForget({
      sessionId,
      turn: 2,
      quote: 'Please forget my PIN',
      scope: { kind: 'turn', session: sessionId, seq: 1 },
      requestedBy: 'agent',
    });
    const cat = await me.gate.requestForget({
      sessionId,
      turn: 2,
      quote: 'and the cat',
      scope: { kind: 'phrase', phrase: 'the cat' },
      requestedBy: 'agent',
    });
    const pile = await owner.get('/');
    expect(pile.html).toContain('Forget requests <span class="meta">(2 waiting)</span>');
    expect(pile.html).toContain('“Please forget my PIN”');
    expect(pile.html).toContain(`href="/forget/request/${pin.id}"`);
    const dry = await owner.get(`/forget/request/${pin.id}`);
    expect(dry.html).toContain('My PIN is 4921.');
    expect(dry.html).toMatch(/<strong id="plan-counts">1 turn[ <]/);
    const fields = planForm(dry.html);
    await refusedUnchanged('CONFIRMATION_REQUIRED', [
      [`/forget/request/${pin.id}`, { _csrf: csrf, ...fields }],
    ]);
    const r = await owner.post(`/forget/request/${pin.id}`, {
      _csrf: csrf,
      ...fields,
      confirm: 'YES',
    });
    expect(r.location).toBe('/');
    expect(flashOf((await owner.get('/')).html)).toMatch(
      new RegExp(`^honoured forget request ${pin.id}: forgot 1 turn`),
    );
    expect((await me.history.turns(sessionId, { from: 1, to: 1 }))[0]?.forgotten).toBeDefined();
    // answered: a second honour or decline is NOT_PENDING, and changes nothing
    await refusedUnchanged('NOT_PENDING', [
      [`/forget/request/${pin.id}`, { _csrf: csrf, ...fields, confirm: 'YES' }],
      [`/forget/request/${pin.id}/decline`, { _csrf: csrf }],
    ]);
    const declined = await owner.post(`/forget/request/${cat.id}/decline`, { _csrf: csrf });
    expect(declined.status).toBe(303);
    expect(flashOf((await owner.get('/')).html)).toBe(
      `declined forget request ${cat.id}: nothing was forgotten`,
    );
    expect((await me.gate.forgetRequests({ status: 'pending' })).length).toBe(0);
    expect((await me.history.turns(sessionId, { from: 2, to: 2 }))[0]?.content).toContain(
      'the cat',
    );
    expect((await owner.get('/')).html).not.toContain('Forget requests');
  });

  it('History lists sessions newest first, paged, each linking to its turns and its dry run', async () => {
    const small = await startServe({
      engine,
      port: 0,
      review: { subject: 'owner', keyFile: OWNER_KEY.keyPath, pageSize: 2, unlockDelayBaseMs: 20 },
    });
    try {
      const v = new Visitor(small.url);
      await v.post('/unlock', { _csrf: await v.csrf(), passphrase: OWNER_PASSPHRASE });
      const newest = (await me.sessions.list({ limit: 3 })).map((s) => s.id);
      const first = await v.get('/history');
      const shown = [...first.html.matchAll(/<tr data-session="([^"]+)"/g)].map((m) => m[1]);
      expect(shown).toEqual(newest.slice(0, 2));
      expect(first.html).toContain('href="/history?page=2" rel="next"');
      expect(first.html).toContain(`href="/forget?kind=session&amp;session=${newest[0]}"`);
      const second = await v.get('/history?page=2');
      expect([...second.html.matchAll(/<tr data-session="([^"]+)"/g)][0]?.[1]).toBe(newest[2]);
      const session = newest[0] ?? '';
      const turns = await me.history.turns(session);
      const page1 = await v.get(`/history/${session}`);
      expect([...page1.html.matchAll(/data-seq="(\d+)"/g)].map((m) => Number(m[1]))).toEqual(
        turns.slice(0, 2).map((x) => x.seq),
      );
      expect(page1.html).toMatch(/aria-current="page"\s*>History</);
    } finally {
      await small.close();
    }
  });

  it('History offers the owner a download of everything: a tar export that imports elsewhere; locked, forged or with a token it gives nothing', async () => {
    const history = await owner.get('/history');
    expect(history.html).toContain('action="/export"');
    const post = (
      fields: Record<string, string>,
      who: Visitor,
      headers: Record<string, string> = {},
    ) =>
      fetch(new URL('/export', serve.url), {
        method: 'POST',
        headers: {
          'content-type': FORM,
          ...(who.cookie === null ? {} : { cookie: `memledger_review=${who.cookie}` }),
          ...headers,
        },
        body: new URLSearchParams(fields).toString(),
        redirect: 'manual',
      });
    const res = await post({ _csrf: csrf }, owner);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-tar');
    expect(res.headers.get('content-disposition')).toMatch(
      /^attachment; filename="memledger-owner-\d{4}-\d{2}-\d{2}\.tar"$/,
    );
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'ml-review-export-'));
    const other = await openTestEngine(kind);
    try {
      const tar = join(dir, 'download.tar');
      writeFileSync(tar, Buffer.from(await res.arrayBuffer()));
      const done = await other.engine.subjects.import(tar);
      expect(done.subject).toBe('owner');
      expect((await other.engine.subject('owner').facts.live()).map((f) => f.id)).toEqual(
        (await me.facts.live()).map((f) => f.id),
      );
    } finally {
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    }
    // a page that never unlocked, a form without this page's token, a token: no tar
    const stranger = new Visitor(serve.url);
    const locked = await post({ _csrf: await stranger.csrf() }, stranger);
    expect(locked.headers.get('content-type')).not.toBe('application/x-tar');
    expect(flashOf(await locked.text())).toMatch(/^REVIEW_LOCKED:/);
    const forged = await post({ _csrf: 'x' }, owner);
    expect(flashOf(await forged.text())).toMatch(/^CSRF_INVALID:/);
    const token = await post({ _csrf: csrf }, owner, { authorization: 'Bearer mlt_x' });
    expect(token.headers.get('content-type')).not.toBe('application/x-tar');
    expect(await token.text()).toContain('ROLE_FORBIDDEN');
  });
});
