/**
 * The owner's own words on the review page, over plain HTTP (no browser): a card's text edited
 * before approving (re-gated, EDIT_DROPPED signs nothing), a fact remembered, a live fact
 * corrected; and for every page and post this work added: tokens refused (403), a post without
 * its CSRF token or its YES changing nothing, and hostile text in a turn, a quote, a fact or a
 * session title reaching the HTML escaped only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningServe } from '../server/serve.js';
import type { Engine, FactId, SubjectHandle } from '../src/index.js';
import { dumpStore } from './support/dump-store.js';
import { ONE_ENGINE, openTestEngine, type TestEngine } from './support/engines.js';
import {
  makeOwnerSigner,
  OWNER_PASSPHRASE,
  ownerWithTokens,
  type SubjectWithTokens,
} from './support/tokens.js';

const OWNER_KEY = makeOwnerSigner();
const FORM = 'application/x-www-form-urlencoded';
const SAID = 'We moved to Lund last spring, and the flat is tiny.';
const QUOTE = 'We moved to Lund last spring';
const PROPOSED = 'The user moved to Lund.';
const EDITED = 'The user moved to Lund last spring.';
const HOSTILE =
  'Payday <script>window.__pwned=1</script> "><img src=x onerror=alert(1)> ' +
  '<a href="javascript:alert(2)">open</a>';

interface Reply {
  status: number;
  html: string;
  location: string | null;
}

/** A browser reduced to one cookie and forms; redirects are not followed. */
class Visitor {
  cookie: string | null = null;
  constructor(private readonly base: string) {}

  async send(
    method: 'GET' | 'POST',
    path: string,
    body?: string,
    extra: Record<string, string> = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = {
      ...(body === undefined ? {} : { 'content-type': FORM }),
      ...extra,
    };
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

  get = (path: string, headers: Record<string, string> = {}) =>
    this.send('GET', path, undefined, headers);
  post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    this.send('POST', path, new URLSearchParams(fields).toString(), headers);

  async csrf(): Promise<string> {
    const m = /name="_csrf" value="([^"]+)"/.exec((await this.get('/')).html);
    if (m?.[1] === undefined) throw new Error('no CSRF field');
    return m[1];
  }
}

const flashOf = (html: string) =>
  /class="flash (?:ok|error)" role="status">([^<]*)</.exec(html)?.[1]?.trim() ?? '';

/**
 * What a page must never hold: a script but htmx, an image, an inline handler, a link or source
 * off the page. Each tag's attributes are read left to right, so text inside a value is a value.
 */
function inertProblems(html: string): string[] {
  const problems: string[] = [];
  for (const m of html.matchAll(/<script\b[^>]*>/gi)) {
    if (m[0] !== '<script src="/assets/htmx.min.js" defer>') problems.push(`script: ${m[0]}`);
  }
  if (/<img\b/i.test(html)) problems.push('an <img> element');
  for (const tag of html.matchAll(/<[a-z][^>]*>/gi)) {
    for (const [, name = '', value] of tag[0].matchAll(/\s([a-z:-]+)(?:="([^"]*)")?/gi)) {
      if (/^on/i.test(name)) problems.push(`handler: ${tag[0]}`);
      if (
        /^(?:src|href|action|formaction|hx-post|hx-get)$/i.test(name) &&
        !value?.startsWith('/')
      ) {
        problems.push(`off-page url: ${tag[0]}`);
      }
    }
  }
  return problems;
}

describe.each(ONE_ENGINE)('the owner’s own words on the review page [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let me: SubjectHandle;
  let o: SubjectWithTokens;
  let serve: RunningServe;
  let owner: Visitor;
  let csrf: string;
  let sessionId: string;

  async function proposal(text = PROPOSED): Promise<FactId> {
    const r = await me.gate.propose({
      sessionId,
      proposedBy: 'agent',
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text,
          origin: 'saw',
          evidence: { turn: 1, quote: QUOTE },
        },
      ],
    });
    const id = r.proposed[0]?.id;
    if (id === undefined) throw new Error(`dropped: ${JSON.stringify(r.dropped)}`);
    return id as FactId;
  }

  /** Every post refused with `code`, and the store exactly as it was. */
  async function refusedUnchanged(code: string, posts: Array<[string, Record<string, string>]>) {
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
    o = await ownerWithTokens(engine, 'owner', OWNER_KEY);
    me = engine.subject('owner');
    sessionId = (await me.sessions.create({ title: 'moving' })).id;
    await me.turns.add({ sessionId, role: 'user', content: SAID });
    serve = await startServe({
      engine,
      port: 0,
      review: { subject: 'owner', keyFile: o.keyPath, unlockDelayBaseMs: 20 },
    });
    owner = new Visitor(serve.url);
    await owner.post('/unlock', { _csrf: await owner.csrf(), passphrase: OWNER_PASSPHRASE });
    csrf = await owner.csrf();
  });

  afterAll(async () => {
    await serve?.close();
    await t?.close();
  });

  it('edit and approve: the edit is re-gated and signed; the answer says what was proposed, approved, and the verdict', async () => {
    const id = await proposal();
    const pile = await owner.get('/');
    expect(pile.html).toContain(`action="/pile/${id}/edit"`);
    expect(pile.html).toMatch(new RegExp(`maxlength="2000" required>${PROPOSED}</textarea>`));
    await refusedUnchanged('CONFIRMATION_REQUIRED', [
      [`/pile/${id}/edit`, { _csrf: csrf, text: EDITED }],
    ]);
    await refusedUnchanged('INVALID_ARGUMENT', [
      [`/pile/${id}/edit`, { _csrf: csrf, text: '  ', confirm: 'YES' }],
      [`/pile/${id}/edit`, { _csrf: csrf, text: 'x'.repeat(2001), confirm: 'YES' }],
    ]);
    // htmx: the card comes back with the three lines, and the badge out of band
    const r = await owner.post(
      `/pile/${id}/edit`,
      { _csrf: csrf, text: EDITED, confirm: 'YES' },
      { 'hx-request': 'true' },
    );
    expect(r.status).toBe(200);
    expect(r.html).toContain(`<dd class="proposed">${PROPOSED}</dd>`);
    expect(r.html).toContain(`<dd class="approved">${EDITED}</dd>`);
    expect(r.html).toMatch(/<dd class="verdict">attested \(asserted\): /);
    expect(r.html).toContain('id="pile-badge"');
    const live = (await me.facts.live()).find((f) => f.text === EDITED);
    expect(live).toMatchObject({ proposedBy: `owner (edit of ${id})`, status: 'active' });
    expect((await me.facts.get(id)).status).toBe('rejected');
    // live memory shows the words the agent proposed as the fact's first value
    const memory = await owner.get('/memory');
    expect(memory.html).toMatch(
      /<li class="edited-from">\s*your edit of the words agent proposed:\s*“The user moved to Lund\.”/,
    );
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it('an edit the gate drops is EDIT_DROPPED with its code, nothing is signed, and the card still waits', async () => {
    const id = await proposal('The user lives in Lund.');
    const before = await dumpStore(engine);
    const r = await owner.post(
      `/pile/${id}/edit`,
      { _csrf: csrf, text: 'The agent moved to Lund.', confirm: 'YES' },
      { 'hx-request': 'true' },
    );
    expect(r.status).toBe(422);
    expect(flashOf(r.html)).toMatch(
      /^EDIT_DROPPED: the gate drops the edited text \(NOT_ABOUT_USER\): .+; nothing was signed$/,
    );
    expect((await me.facts.get(id)).status).toBe('proposed');
    const after = await dumpStore(engine);
    expect(after.decisions).toBe(before.decisions);
    expect(after.facts).toBe(before.facts);
    // without htmx, the same refusal in the page's flash box
    const plain = await owner.post(`/pile/${id}/edit`, {
      _csrf: csrf,
      text: 'The user moved to\u200b Lund.',
      confirm: 'YES',
    });
    expect(flashOf(plain.html)).toMatch(
      /^EDIT_DROPPED: the gate drops the edited text \(HIDDEN_CHARACTERS\)/,
    );
    expect((await me.facts.get(id)).status).toBe('proposed');
  });

  it('remember: the owner’s words with a key go live, signed; no YES, a blank text or a long key change nothing', async () => {
    const words = 'The user’s sister is called Ana.';
    await refusedUnchanged('CONFIRMATION_REQUIRED', [
      ['/memory/remember', { _csrf: csrf, text: words, key: 'sister' }],
    ]);
    await refusedUnchanged('INVALID_ARGUMENT', [
      ['/memory/remember', { _csrf: csrf, text: '', confirm: 'YES' }],
      ['/memory/remember', { _csrf: csrf, text: words, key: 'k'.repeat(257), confirm: 'YES' }],
    ]);
    const r = await owner.post('/memory/remember', {
      _csrf: csrf,
      text: words,
      key: 'sister',
      confirm: 'YES',
    });
    expect(r.status).toBe(303);
    expect(r.location).toBe('/memory');
    const memory = await owner.get('/memory');
    expect(flashOf(memory.html)).toMatch(
      /^remembered in your words: now active \(decision #\d+, signed\)/,
    );
    const fact = (await me.facts.live()).find((f) => f.text === words);
    expect(fact).toMatchObject({ key: 'sister', proposedBy: 'owner', attested: true });
    expect(memory.html).toContain(`action="/memory/${fact?.id}/correct"`);
    expect(memory.html).toContain(`href="/forget?kind=fact&amp;fact=${fact?.id}"`);
  });

  it('correct: the owner’s words replace a live fact, its lineage kept; no YES changes nothing', async () => {
    const before = (await me.facts.live()).find((f) => f.key === 'sister');
    if (before === undefined) throw new Error('the remembered fact is not live');
    await refusedUnchanged('CONFIRMATION_REQUIRED', [
      [`/memory/${before.id}/correct`, { _csrf: csrf, text: 'The user’s sister is Ana Lund.' }],
    ]);
    const r = await owner.post(`/memory/${before.id}/correct`, {
      _csrf: csrf,
      text: 'The user’s sister is Ana Lund.',
      confirm: 'YES',
    });
    expect(r.status).toBe(303);
    const memory = await owner.get('/memory');
    expect(flashOf(memory.html)).toMatch(
      new RegExp(`^corrected in your words: now active .*; it replaced fact ${before.id}$`),
    );
    const now = (await me.facts.live()).find((f) => f.key === 'sister');
    expect(now).toMatchObject({ text: 'The user’s sister is Ana Lund.', supersedesId: before.id });
    expect(memory.html).toContain('“The user’s sister is called Ana.”');
    // a fact no longer live cannot be corrected again
    await refusedUnchanged('FACT_NOT_LIVE', [
      [`/memory/${before.id}/correct`, { _csrf: csrf, text: 'Anything.', confirm: 'YES' }],
    ]);
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it('agent and reader tokens get 403 on every new page and post, even beside the unlocked cookie; posts without CSRF change nothing', async () => {
    const id = await proposal('The user moved house.');
    const fact = (await me.facts.live())[0]?.id ?? 'none';
    const request = await me.gate.requestForget({
      sessionId,
      turn: 1,
      quote: 'the flat is tiny',
      scope: { kind: 'turn', session: sessionId, seq: 1 },
    });
    const pages = [
      '/history',
      `/history/${sessionId}`,
      `/forget?kind=fact&fact=${fact}`,
      `/forget?kind=turn&session=${sessionId}&seq=1`,
      `/forget/request/${request.id}`,
    ];
    const posts: Array<[string, Record<string, string>]> = [
      [`/pile/${id}/edit`, { text: EDITED, confirm: 'YES' }],
      ['/memory/remember', { text: 'The user likes figs.', confirm: 'YES' }],
      [`/memory/${fact}/correct`, { text: 'The user likes figs.', confirm: 'YES' }],
      ['/forget/plan', { kind: 'session', session: sessionId }],
      ['/forget', { kind: 'session', session: sessionId, confirm: 'YES', withFacts: '1' }],
      [`/forget/request/${request.id}`, { confirm: 'YES', withFacts: '1' }],
      [`/forget/request/${request.id}/decline`, {}],
    ];
    const before = await dumpStore(engine);
    for (const secret of [o.agent, o.reader]) {
      const auth = { authorization: `Bearer ${secret}` };
      for (const path of pages) {
        const r = await owner.get(path, auth);
        expect(r.status, path).toBe(403);
        expect(flashOf(r.html), path).toMatch(/^ROLE_FORBIDDEN:/);
      }
      for (const [path, fields] of posts) {
        const r = await owner.post(path, { _csrf: csrf, ...fields }, auth);
        expect(r.status, path).toBe(403);
        expect(flashOf(r.html), path).toMatch(/^ROLE_FORBIDDEN:/);
      }
    }
    for (const [path, fields] of posts) {
      for (const forged of [{}, { _csrf: 'forged' }]) {
        const r = await owner.post(path, { ...forged, ...fields });
        expect(r.status, path).toBe(403);
        expect(flashOf(r.html), path).toMatch(/^CSRF_INVALID:/);
      }
    }
    expect(await dumpStore(engine)).toEqual(before);
    // a visitor that never unlocked sees the unlock form on every new page
    const stranger = new Visitor(serve.url);
    for (const path of pages) {
      const r = await stranger.get(path);
      expect(r.html, path).toContain('name="passphrase"');
      expect(r.html, path).not.toContain(SAID);
    }
    await me.owner.declineForget({ request: request.id });
  });

  it('hostile text in a turn, a session title, a request quote and a fact renders inert on every new view', async () => {
    const hostileSession = (await me.sessions.create({ title: HOSTILE })).id;
    await me.turns.add({ sessionId: hostileSession, role: 'user', content: HOSTILE });
    const req = await me.gate.requestForget({
      sessionId: hostileSession,
      turn: 1,
      quote: HOSTILE,
      scope: { kind: 'phrase', phrase: HOSTILE },
      requestedBy: HOSTILE,
    });
    const r = await me.gate.propose({
      sessionId: hostileSession,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: HOSTILE,
          origin: 'saw',
          evidence: { turn: 1, quote: 'Payday' },
        },
      ],
    });
    const proposalId = r.proposed[0]?.id as FactId;
    const fact = await owner.post(`/pile/${proposalId}/edit`, {
      _csrf: csrf,
      text: HOSTILE,
      confirm: 'YES',
    });
    expect(fact.status).toBe(303);
    const pages = [
      '/',
      '/memory',
      '/history',
      `/history/${hostileSession}`,
      `/forget/request/${req.id}`,
      `/forget?kind=fact&fact=${proposalId}`,
      `/forget?kind=turn&session=${hostileSession}&seq=1`,
      `/forget?kind=session&session=${hostileSession}`,
    ];
    for (const path of pages) {
      const page = await owner.get(path);
      expect(page.status, path).toBe(200);
      expect(page.html, path).toContain('Payday &lt;script&gt;window.__pwned=1&lt;/script&gt;');
      expect(inertProblems(page.html), path).toEqual([]);
    }
    const dry = await owner.post('/forget/plan', { _csrf: csrf, kind: 'phrase', phrase: HOSTILE });
    expect(dry.status).toBe(200);
    expect(inertProblems(dry.html)).toEqual([]);
    // a negative control: the check finds a link off the page, a handler, an image and its source
    expect(inertProblems('<a href="javascript:x" onclick="y">x</a><img src="x">')).toHaveLength(4);
  });
});
