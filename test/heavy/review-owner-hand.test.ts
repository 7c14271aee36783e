// The owner's hand over what is already remembered, driven in headless Chromium against a real
// `memledger serve` app: a card's words edited before approving, a fact remembered in the owner's
// words, a live fact forgotten from Live memory and a turn from History (each after a dry run),
// an agent's forget request honoured from the pile, each with its negative control (no YES, an
// edit the gate drops, a turn a live fact rests on), the same flows without JavaScript, and
// hostile text inert on every new view. Screenshots go to a printed folder; with
// MEMLEDGER_DOCS_SCREENSHOTS=1, the four in docs/ (review-edit, -forget, -history, -remember).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningServe } from '../../server/serve.js';
import type { FactId, SubjectHandle } from '../../src/index.js';
import { browserAvailable, launchChromium, screenshotDir } from '../support/browser.js';
import { openTestEngine, type TestEngine } from '../support/engines.js';
import {
  makeOwnerSigner,
  OWNER_PASSPHRASE,
  ownerWithTokens,
  type SubjectWithTokens,
} from '../support/tokens.js';

const SUBJECT = 'owner';
const MOVED =
  'We moved to Lund last spring, and the flat is tiny. I drink green tea every morning.';
const ADDRESS = 'My old address was Storgatan 4, in Malmö.';
const ASK = 'Please forget my old address. And forget the dentist too.';
const DENTIST = 'The dentist is on Tuesday at nine.';
const PROPOSED = 'The user moved to Lund.';
const EDITED = 'The user moved to Lund last spring; the flat is tiny.';
const REMEMBERED = 'The user takes green tea without sugar.';
const HOSTILE =
  'Payday is Friday <script>window.__pwned="script"</script>' +
  ' " onmouseover="window.__pwned=\'hover\'" x="' +
  ' <a href="javascript:window.__pwned=\'link\'" id="evil">open</a>' +
  ' <img src=x onerror="window.__pwned=\'img\'">';

const DOCS = process.env.MEMLEDGER_DOCS_SCREENSHOTS === '1';
const DOCS_DIR = fileURLToPath(new URL('../../docs/', import.meta.url));

const run = browserAvailable();

describe.runIf(run)("the owner's hand on the review page, in Chromium [pglite]", () => {
  let t: TestEngine;
  let owner: SubjectWithTokens;
  let me: SubjectHandle;
  let serve: RunningServe;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let shots: string;
  let sessionId: string;

  const shot = (name: string) =>
    page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  /** One of the four pictures docs/SERVER.md shows: in docs/ only when asked for. */
  const docShot = async (name: string) => {
    await shot(`review-${name}`);
    if (DOCS) {
      mkdirSync(DOCS_DIR, { recursive: true });
      await page.screenshot({ path: join(DOCS_DIR, `review-${name}.png`), fullPage: true });
    }
  };
  const card = (id: string) => page.locator(`article.proposal[data-proposal="${id}"]`);
  const flash = () => page.locator('#flash').innerText();
  const links = async () => (await me.owner.verifyChain()).length;

  /** Runs `act`, then waits for the next document to load (a form post and its redirect). */
  async function navigate(act: () => Promise<unknown>, p: Page = page): Promise<void> {
    await p.evaluate('document.body.setAttribute("data-stale", "1")');
    await act();
    await p.waitForSelector('body:not([data-stale])');
    await p.waitForLoadState('load');
  }

  async function propose(text: string, quote: string, turn = 1): Promise<string> {
    const r = await me.gate.propose({
      sessionId,
      proposedBy: 'agent',
      proposals: [
        { slot: 'what_i_know_about_user', text, origin: 'saw', evidence: { turn, quote } },
      ],
    });
    const id = r.proposed[0]?.id;
    if (id === undefined) throw new Error(`dropped: ${JSON.stringify(r.dropped)}`);
    return id;
  }

  async function unlock(p: Page): Promise<void> {
    await p.goto(serve.url);
    await p.fill('#passphrase', OWNER_PASSPHRASE);
    await p.click('#unlock');
    await p.waitForSelector('nav[aria-label="views"]');
  }

  beforeAll(async () => {
    shots = screenshotDir('review-owner-hand');
    t = await openTestEngine('pglite', { arrival: { timeZone: 'UTC' } });
    // a production-strength key: the review page unlocks no other
    owner = await ownerWithTokens(t.engine, SUBJECT, makeOwnerSigner());
    me = t.engine.subject(SUBJECT);
    sessionId = (await me.sessions.create({ title: 'moving house' })).id;
    for (const [role, content] of [
      ['user', MOVED],
      ['assistant', 'Noted: Lund, a small flat, green tea.'],
      ['user', ADDRESS],
      ['user', ASK],
      ['user', DENTIST],
    ] as const) {
      await me.turns.add({
        sessionId,
        role,
        content,
        ...(role === 'assistant' ? { receipt: { noTools: true } } : {}),
      });
    }
    serve = await startServe({
      engine: t.engine,
      port: 0,
      review: { subject: SUBJECT, keyFile: owner.keyPath, unlockDelayBaseMs: 200 },
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
    page = await context.newPage();
    await unlock(page);
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await serve?.close();
    await t?.close();
  });

  it('an edit the gate drops shows its code and reason, signs nothing, and the card still waits', async () => {
    const id = await propose(PROPOSED, 'We moved to Lund last spring');
    const before = await links();
    await page.goto(serve.url);
    const c = card(id);
    await c.locator('details.edit summary').click();
    await c.locator('form.edit textarea').fill('The agent moved to Lund.');
    await c.locator('form.edit input.confirm').fill('YES');
    await c.locator('button.approve-edit').click();
    await page.waitForSelector('#flash .flash.error');
    expect(await flash()).toMatch(
      /^EDIT_DROPPED: the gate drops the edited text \(NOT_ABOUT_USER\): .+; nothing was signed$/,
    );
    expect((await me.facts.get(id as FactId)).status).toBe('proposed');
    expect(await links()).toBe(before);
    await expect(c.locator('button.approve-edit').count()).resolves.toBe(1);
  });

  it('an edit without YES changes nothing', async () => {
    const id = (await me.gate.pile())[0]?.fact.id ?? '';
    const c = card(id);
    await c.locator('form.edit textarea').fill(EDITED);
    await c.locator('form.edit input.confirm').fill('');
    await c.locator('button.approve-edit').click();
    // a locator, not a page function: the page's CSP refuses code evaluated from a string
    await page.locator('#flash', { hasText: 'CONFIRMATION_REQUIRED' }).waitFor();
    expect((await me.facts.get(id as FactId)).status).toBe('proposed');
    expect((await me.facts.live()).map((f) => f.text)).not.toContain(EDITED);
  });

  it("edits a card and approves it: the card shows what was proposed, what was approved and the gate's verdict; the live fact carries the edit, its lineage the original", async () => {
    const id = (await me.gate.pile())[0]?.fact.id ?? '';
    await page.goto(serve.url); // the page anew: the errors the last two left are over
    const c = card(id);
    await c.locator('details.edit summary').click();
    await c.locator('form.edit textarea').fill(EDITED);
    await c.locator('form.edit input.confirm').fill('YES');
    await docShot('edit');
    await c.locator('button.approve-edit').click();
    const done = page.locator(`article.decided.edited[data-proposal="${id}"]`);
    await done.waitFor();
    expect(await done.locator('dd.proposed').innerText()).toBe(PROPOSED);
    expect(await done.locator('dd.approved').innerText()).toBe(EDITED);
    expect(await done.locator('dd.verdict').innerText()).toMatch(/^attested \(asserted\): /);
    expect(await done.locator('.flash.ok').innerText()).toMatch(/^approved your words: now active/);
    const live = (await me.facts.live()).find((f) => f.text === EDITED);
    expect(live?.proposedBy).toBe(`owner (edit of ${id})`);
    expect((await me.facts.get(id as FactId)).status).toBe('rejected');
    await page.goto(`${serve.url}memory`);
    const fact = page.locator('article.fact', { hasText: EDITED });
    expect(await fact.locator('li.edited-from').innerText()).toContain(`“${PROPOSED}”`);
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it('remember: without YES nothing changes; with it the words are live memory, signed', async () => {
    await page.goto(`${serve.url}memory`);
    const form = page.locator('form.remember');
    await form.locator('textarea').fill(REMEMBERED);
    await form.locator('input[name=key]').fill('tea');
    await navigate(() => form.locator('button.remember').click());
    expect(await flash()).toMatch(/^CONFIRMATION_REQUIRED: /);
    expect((await me.facts.live()).map((f) => f.text)).not.toContain(REMEMBERED);
    await page.goto(`${serve.url}memory`);
    await form.locator('textarea').fill(REMEMBERED);
    await form.locator('input[name=key]').fill('tea');
    await form.locator('input.confirm').fill('YES');
    await docShot('remember');
    await navigate(() => form.locator('button.remember').click());
    expect(page.url()).toBe(`${serve.url}memory`);
    expect(await flash()).toMatch(
      /^remembered in your words: now active \(decision #\d+, signed\)/,
    );
    await expect(page.locator('article.fact', { hasText: REMEMBERED }).count()).resolves.toBe(1);
    expect((await me.facts.live()).find((f) => f.text === REMEMBERED)).toMatchObject({
      key: 'tea',
      proposedBy: 'owner',
    });
  });

  it('forgets a fact from Live memory after its dry run; without YES nothing changes', async () => {
    const fact = (await me.facts.live()).find((f) => f.text === REMEMBERED);
    await page.goto(`${serve.url}memory`);
    const article = page.locator('article.fact', { hasText: REMEMBERED });
    await navigate(() => article.locator('a.forget-fact').click());
    expect(await page.locator('#plan-counts').innerText()).toBe('1 fact');
    expect(await page.locator('.forget-named').innerText()).toContain(REMEMBERED);
    await navigate(() => page.locator('button.forget').click());
    expect(await flash()).toMatch(/^CONFIRMATION_REQUIRED: /);
    expect((await me.facts.live()).map((f) => f.id)).toContain(fact?.id);
    await page.goBack();
    await page.locator('form.forget input.confirm').fill('YES');
    await navigate(() => page.locator('button.forget').click());
    expect(page.url()).toBe(`${serve.url}memory`);
    expect(await flash()).toMatch(/^forgot 1 fact \(decision #\d+, forget [^,]+, signed\)/);
    await expect(page.locator('article.fact', { hasText: REMEMBERED }).count()).resolves.toBe(0);
    expect((await me.facts.live()).map((f) => f.id)).not.toContain(fact?.id);
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it('forgets a turn from History: a live fact resting on it is listed and refused until its box is ticked; then the tombstone shows', async () => {
    await page.goto(`${serve.url}history`);
    await navigate(() => page.locator(`tr[data-session="${sessionId}"] td a`).first().click());
    const first = page.locator('li.turn[data-seq="1"]');
    expect(await first.innerText()).toContain('We moved to Lund last spring');
    await navigate(() => first.locator('a.forget-turn').click());
    expect(await page.locator('#plan-counts').innerText()).toMatch(/^1 turn/);
    expect(await page.locator('ul.live-facts').innerText()).toContain(EDITED);
    await docShot('forget');
    // YES without the box: FORGET_CITED, nothing forgotten
    await page.locator('form.forget input.confirm').fill('YES');
    await navigate(() => page.locator('button.forget').click());
    expect(await flash()).toMatch(/^FORGET_CITED: live facts rest on what would be forgotten/);
    expect((await me.history.turns(sessionId, { from: 1, to: 1 }))[0]?.forgotten).toBeUndefined();
    await page.goBack();
    await page.locator('form.forget input[name=withFacts]').check();
    await page.locator('form.forget input.confirm').fill('YES');
    await navigate(() => page.locator('button.forget').click());
    expect(page.url()).toBe(`${serve.url}history/${sessionId}`);
    // the turn, the edited fact and the proposal it replaced, and the edit the gate dropped
    expect(await flash()).toMatch(/^forgot 1 turn, 2 facts and 1 dropped proposal \(decision #\d+/);
    const [turn] = await me.history.turns(sessionId, { from: 1, to: 1 });
    const day = turn?.forgotten?.at.toISOString().slice(0, 10) ?? 'none';
    expect(await page.locator('li.turn[data-seq="1"]').innerText()).toBe(
      `[turn 1: forgotten by the owner on ${day}]`,
    );
    expect(await page.content()).not.toContain('green tea every morning');
    await docShot('history');
    await page.goto(`${serve.url}memory`);
    await expect(page.locator('article.fact', { hasText: EDITED }).count()).resolves.toBe(0);
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it("honours an agent's forget request from the pile after its dry run (not without YES), and declines another", async () => {
    const address = await me.gate.requestForget({
      sessionId,
      turn: 4,
      quote: 'Please forget my old address',
      scope: { kind: 'turn', session: sessionId, seq: 3 },
      requestedBy: 'agent',
    });
    const dentist = await me.gate.requestForget({
      sessionId,
      turn: 4,
      quote: 'forget the dentist too',
      scope: { kind: 'phrase', phrase: 'dentist' },
      requestedBy: 'agent',
    });
    await page.goto(serve.url);
    const request = page.locator(`article.forget-request[data-request="${address.id}"]`);
    expect(await request.locator('.quote').innerText()).toBe('“Please forget my old address”');
    expect(await request.innerText()).toContain(`asks to forget turn 3 of session ${sessionId}`);
    await navigate(() => request.locator('a.review-forget').click());
    expect(await page.locator('.forget-named').innerText()).toContain('Storgatan 4');
    await navigate(() => page.locator('button.forget').click());
    expect(await flash()).toMatch(/^CONFIRMATION_REQUIRED: /);
    expect((await me.gate.forgetRequests({ status: 'pending' })).length).toBe(2);
    await page.goBack();
    await page.locator('form.forget input.confirm').fill('YES');
    await navigate(() => page.locator('button.forget').click());
    expect(await flash()).toMatch(
      new RegExp(`^honoured forget request ${address.id}: forgot 1 turn`),
    );
    expect((await me.history.turns(sessionId, { from: 3, to: 3 }))[0]?.forgotten).toBeDefined();
    const decline = page.locator(`article.forget-request[data-request="${dentist.id}"]`);
    await navigate(() => decline.locator('button.decline-forget').click());
    expect(await flash()).toBe(`declined forget request ${dentist.id}: nothing was forgotten`);
    expect((await me.gate.forgetRequests({ status: 'pending' })).length).toBe(0);
    expect((await me.history.turns(sessionId, { from: 4, to: 4 }))[0]?.content).toBe(ASK);
    await expect(page.locator('article.forget-request').count()).resolves.toBe(0);
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it('works without JavaScript: edit and approve, and a phrase forgotten everywhere, are plain form posts', async () => {
    const id = await propose('The user sees the dentist on Tuesday.', DENTIST, 5);
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const p = await plain.newPage();
    try {
      await unlock(p);
      const c = p.locator(`article.proposal[data-proposal="${id}"]`);
      await c.locator('details.edit summary').click();
      await c.locator('form.edit textarea').fill('The user sees the dentist on Tuesday at nine.');
      await c.locator('form.edit input.confirm').fill('YES');
      await navigate(() => c.locator('button.approve-edit').click(), p);
      expect(await p.locator('#flash').innerText()).toMatch(/^approved your words: now active/);
      await p.goto(`${serve.url}history`);
      await p.locator('form.phrase input[name=phrase]').fill('dentist');
      await navigate(() => p.locator('button.plan-phrase').click(), p);
      expect(await p.locator('#plan-counts').innerText()).toMatch(/\d+ (turn|fact)/);
      const box = p.locator('form.forget input[name=withFacts]');
      if ((await box.count()) > 0) await box.check();
      await p.locator('form.forget input.confirm').fill('YES');
      await navigate(() => p.locator('button.forget').click(), p);
      expect(await p.locator('#flash').innerText()).toMatch(/^forgot /);
      const all = await me.history.turns(sessionId);
      expect(all.map((x) => x.content).join('\n')).not.toMatch(/dentist/i);
      expect((await me.facts.live()).map((f) => f.text).join('\n')).not.toMatch(/dentist/i);
      expect((await me.owner.verifyChain()).ok).toBe(true);
    } finally {
      await plain.close();
    }
  });

  it('hostile text in a turn, a session title, a request quote and a fact renders inert on the new views', async () => {
    const hostile = (await me.sessions.create({ title: HOSTILE })).id;
    await me.turns.add({ sessionId: hostile, role: 'user', content: HOSTILE });
    const request = await me.gate.requestForget({
      sessionId: hostile,
      turn: 1,
      quote: HOSTILE,
      scope: { kind: 'turn', session: hostile, seq: 1 },
      requestedBy: HOSTILE,
    });
    const r = await me.gate.propose({
      sessionId: hostile,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: HOSTILE,
          origin: 'saw',
          evidence: { turn: 1, quote: 'Payday is Friday' },
        },
      ],
    });
    const fact = r.proposed[0]?.id as FactId;
    await me.owner.decide({ proposalId: fact, decision: 'approve', signer: owner.signer });
    for (const path of [
      '',
      'memory',
      'history',
      `history/${hostile}`,
      `forget/request/${request.id}`,
      `forget?kind=fact&fact=${fact}`,
      `forget?kind=session&session=${hostile}`,
    ]) {
      await page.goto(`${serve.url}${path}`);
      const shown = page.locator('.said, .claim, .quote, .tombstone, td a, h2', {
        hasText: 'Payday is Friday <script>',
      });
      expect(await shown.count(), path).toBeGreaterThan(0);
      await shown.first().hover();
      expect(await page.evaluate('window.__pwned'), path).toBeUndefined();
      expect(await page.locator('script:not([src="/assets/htmx.min.js"])').count(), path).toBe(0);
      expect(await page.locator('[onmouseover], [onerror]').count(), path).toBe(0);
      expect(await page.locator('a[href^="javascript:"], #evil, img').count(), path).toBe(0);
    }
  });
});
