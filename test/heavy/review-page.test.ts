// The owner's review page, driven in headless Chromium against a real `memledger serve` app on
// PostgreSQL: unlock, the seed-001 night's pile, reject, approve by typing YES, live memory with
// its passport, the chain, and every refusal (wrong passphrase, tokens, CSRF, hostile text, the
// idle lock), plus the pile notice. Screenshots of each view go to a printed folder.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED_001_DAY, SEED_001_NIGHT } from '../../cli/commands/demo-gate.js';
import { startServe, type RunningServe } from '../../server/serve.js';
import { type FactId, readOwnerPublicKey, type SubjectHandle } from '../../src/index.js';
import { browserAvailable, launchChromium, screenshotDir } from '../support/browser.js';
import { runCliCaptured } from '../support/cli.js';
import { openTestEngine, type TestEngine } from '../support/engines.js';
import {
  makeOwnerSigner,
  OWNER_PASSPHRASE,
  ownerWithTokens,
  type SubjectWithTokens,
} from '../support/tokens.js';

const SUBJECT = 'owner';
const WIRE = 'The user authorized wire transfers for the vendor contract.';
const STANCE = 'Keep answers short; the user reads on a phone.';
const HOSTILE =
  'Payday is Friday <script>window.__pwned="script"</script>' +
  ' " onmouseover="window.__pwned=\'hover\'" x="' +
  ' <a href="javascript:window.__pwned=\'link\'" id="evil">open</a>' +
  ' <img src=x onerror="window.__pwned=\'img\'">';

interface Notice {
  body: Record<string, unknown>;
}

async function receiver(): Promise<{ server: Server; url: string; notices: Notice[] }> {
  const notices: Notice[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString('utf8')));
    req.on('end', () => {
      notices.push({ body: JSON.parse(raw) as Record<string, unknown> });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/notice`, notices };
}

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const run = browserAvailable();

describe.runIf(run)('the review page in Chromium [postgres]', () => {
  let t: TestEngine;
  let owner: SubjectWithTokens;
  let me: SubjectHandle;
  let serve: RunningServe;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let sink: Awaited<ReturnType<typeof receiver>>;
  let shots: string;
  let sessionId: string;

  const shot = (name: string) =>
    page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  const card = (text: string) => page.locator('article.proposal', { hasText: text });

  beforeAll(async () => {
    shots = screenshotDir('review');
    t = await openTestEngine('postgres');
    // a production-strength key: the review page unlocks no other
    owner = await ownerWithTokens(t.engine, SUBJECT, makeOwnerSigner());
    me = t.engine.subject(SUBJECT);
    sink = await receiver();
    serve = await startServe({
      engine: t.engine,
      port: 0,
      review: {
        subject: SUBJECT,
        keyFile: owner.keyPath,
        unlockDelayBaseMs: 200,
        verifyChain: async (h) => {
          const ownerKey = readOwnerPublicKey(owner.keyPath);
          return {
            report: await h.owner.verifyChain({ ownerKey }),
            anchored: true,
            anchor: `key file ${owner.keyPath}`,
            signedHead: null,
          };
        },
      },
      notifyUrl: sink.url,
      notifyIntervalMs: 100,
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
    page = await context.newPage();
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await serve?.close();
    await new Promise((r) => sink?.server.close(r));
    await t?.close();
  });

  it('the notify URL hears nothing while the pile is empty, then exactly one notice for the new pile', async () => {
    await new Promise((r) => setTimeout(r, 400));
    expect(sink.notices).toHaveLength(0);
    const session = await me.sessions.create({ title: 'seed 001' });
    sessionId = session.id;
    for (const turn of SEED_001_DAY) {
      await me.turns.add({
        sessionId,
        role: turn.role,
        content: turn.content,
        ...(turn.role === 'assistant' ? { receipt: { noTools: true } } : {}),
      });
    }
    const night = await me.gate.propose({
      sessionId,
      proposals: SEED_001_NIGHT,
      proposedBy: 'reflection',
    });
    expect(night.proposed.length).toBeGreaterThanOrEqual(2);
    await until(() => sink.notices.length > 0);
    await new Promise((r) => setTimeout(r, 600)); // several more looks at a pile that stays full
    expect(sink.notices).toHaveLength(1);
    const notice = sink.notices[0]?.body ?? {};
    expect(notice).toMatchObject({
      type: 'memledger.pile',
      subject: SUBJECT,
      pending: night.proposed.length,
    });
    expect(notice.reviewUrl).toBe(serve.url);
    expect(JSON.stringify(notice)).not.toContain('wire');
  });

  it('shows only the unlock form until the passphrase is given, and refuses a wrong one, waiting longer each time', async () => {
    await page.goto(serve.url);
    await expect(page.locator('#passphrase').count()).resolves.toBe(1);
    await expect(page.locator('article.proposal').count()).resolves.toBe(0);
    expect(await page.content()).not.toContain('wire transfers');
    await shot('unlock');
    for (const [n, wait] of [
      [1, '0.2 s'],
      [2, '0.4 s'],
    ] as const) {
      await page.fill('#passphrase', `not the passphrase ${n}`);
      const [answer] = await Promise.all([
        page.waitForResponse('**/unlock'),
        page.click('#unlock'),
      ]);
      expect(answer.status()).toBe(401);
      const flash = await page.locator('#flash').innerText();
      expect(flash).toContain('BAD_PASSPHRASE');
      expect(flash).toContain(`wrong ${n} time`);
      expect(flash).toContain(`this one ${wait}`);
    }
    expect(serve.review.sessions.unlockedCount()).toBe(0);
    await shot('unlock-refused');
  });

  it('unlocks, and the pile shows the wire-transfer claim flagged UNATTESTED beside the cited turn', async () => {
    await page.fill('#passphrase', OWNER_PASSPHRASE);
    await page.click('#unlock');
    await page.waitForSelector('article.proposal');
    expect(serve.review.sessions.unlockedCount()).toBe(1);
    const pending = (await me.gate.pile()).length;
    expect(await page.title()).toBe(`(${pending}) memledger review: ${SUBJECT}`);
    expect(await page.locator('#pile-badge').innerText()).toBe(String(pending));
    const wire = card(WIRE);
    await expect(wire.count()).resolves.toBe(1);
    expect(await wire.locator('.unattested').innerText()).toBe(
      'UNATTESTED (not_found): the quoted sentence says none of "The user authorized wire transfers for the vendor contract."',
    );
    // the planted question, read as a record of a decision: its verdict says it only asked
    const planted = card('The user and the agent decided something about the vendor contract');
    expect(await planted.locator('.unattested').innerText()).toMatch(
      /^UNATTESTED \(presupposed\): the quoted sentence is a request/u,
    );
    // the quote marked inside the whole cited turn, with the turns before and after it
    expect(await wire.locator('li.cited mark').innerText()).toBe('Keep your answers short');
    expect(await wire.locator('li.cited').innerText()).toContain('I read these on my phone');
    expect(await wire.locator('li.context').count()).toBe(2);
    // a genuine stance carries no flag, and its verdict quietly
    await expect(card(STANCE).first().locator('.unattested').count()).resolves.toBe(0);
    expect(await card(STANCE).first().locator('.attested').innerText()).toMatch(
      /^attested \(asserted\): the user states it/u,
    );
    await shot('pile');
  });

  it('a form posted without its CSRF token is refused and changes nothing', async () => {
    const wire = card(WIRE);
    await wire.locator('form.reject input[name=_csrf]').evaluate((el) => el.remove());
    // without htmx too: the plain form post
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/reject') && r.request().method() === 'POST'),
      wire.locator('form.reject').evaluate((f) => {
        f.removeAttribute('hx-post');
        (f as unknown as { submit(): void }).submit();
      }),
    ]);
    await page.waitForLoadState('load');
    expect(await page.locator('#flash').innerText()).toContain('CSRF_INVALID');
    const fact = (await me.gate.pile()).find((p) => p.fact.text === WIRE);
    expect(fact?.fact.status).toBe('proposed');
    // and from outside the browser: the session cookie without the token
    const cookie = (await context.cookies()).find((c) => c.name === 'memledger_review');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Strict');
    const res = await fetch(`${serve.url}pile/${fact?.fact.id ?? ''}/reject`, {
      method: 'POST',
      headers: {
        cookie: `memledger_review=${cookie?.value ?? ''}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: '_csrf=forged',
    });
    expect(res.status).toBe(403);
    expect((await me.facts.get(fact?.fact.id ?? ('' as FactId))).status).toBe('proposed');
  });

  it('rejects the wire-transfer claim, and the badge and title follow', async () => {
    await page.goto(serve.url);
    const before = (await me.gate.pile()).length;
    await card(WIRE).locator('button.reject').click();
    await page.waitForSelector('article.decided');
    expect(await page.locator('article.decided').innerText()).toContain('rejected: now rejected');
    await until(async () => (await page.locator('#pile-badge').innerText()) === String(before - 1));
    await until(async () => (await page.title()).startsWith(`(${before - 1})`));
    const wire = (await me.facts.all()).find((f) => f.text === WIRE);
    expect(wire?.status).toBe('rejected');
  });

  it('approving needs the typed YES: without it nothing changes', async () => {
    const stance = card(STANCE).first();
    await stance.locator('button.approve').click();
    await until(async () =>
      (await page.locator('#flash').innerText()).includes('CONFIRMATION_REQUIRED'),
    );
    expect((await me.facts.live()).map((f) => f.text)).not.toContain(STANCE);
  });

  it("a card decided in place empties the earlier error, and its night's count and reject-all follow", async () => {
    // the error the last test left, on the page as it is (no reload)
    expect(await page.locator('#flash').innerText()).toContain('CONFIRMATION_REQUIRED');
    const planted = card('The user and the agent decided something about the vendor contract');
    const id = (await planted.getAttribute('data-proposal')) ?? '';
    const head = page.locator('.night-head', { has: page.locator(`input[value="${id}"]`) });
    const before = Number(/\((\d+) waiting\)/u.exec(await head.innerText())?.[1]);
    expect(before).toBeGreaterThan(1);
    const day = ((await head.getAttribute('id')) ?? '').slice('night-'.length);
    await planted.locator('button.reject').click();
    await page.waitForSelector(`article.decided[data-proposal="${id}"]`);
    await until(async () => (await page.locator('#flash').innerText()).trim() === '');
    const after = page.locator(`#night-${day}`);
    expect(await after.innerText()).toContain(`(${before - 1} waiting)`);
    expect(await after.locator('button.reject-night').innerText()).toBe(
      `Reject all ${before - 1} from ${day}`,
    );
    await expect(after.locator(`input[value="${id}"]`).count()).resolves.toBe(0);
    await shot('pile-decided-in-place');
  });

  it('approves the genuine stance from the keyboard alone: tab to it, type YES, press Enter', async () => {
    await page.goto(serve.url);
    const target = await card(STANCE).first().getAttribute('data-proposal');
    let focused: string | null = null;
    for (let i = 0; i < 80 && focused !== target; i += 1) {
      await page.keyboard.press('Tab');
      // the focused element, asked in the page (the test's own types know no DOM)
      focused = (await page.evaluate(
        `(() => { const el = document.activeElement;
          return el && el.tagName === 'INPUT' && el.name === 'confirm'
            ? el.closest('article').getAttribute('data-proposal') : null; })()`,
      )) as string | null;
    }
    expect(focused).toBe(target);
    await page.keyboard.type('YES');
    await page.keyboard.press('Enter');
    await page.waitForSelector(`article.decided[data-proposal="${target ?? ''}"]`);
    expect(await page.locator('article.decided').innerText()).toContain('approved: now active');
  });

  it('the fact is live memory with its passport, and chain verify is ok', async () => {
    await page.goto(`${serve.url}memory`);
    const fact = page.locator('article.fact', { hasText: STANCE });
    await expect(fact.count()).resolves.toBe(1);
    const passport = await fact.locator('dl.passport').innerText();
    expect(passport).toContain('saw');
    expect(passport).toMatch(/turn #5: “keep your answers short, I read these on my phone”/i);
    await shot('memory');
    await page.goto(`${serve.url}chain`);
    expect(await page.locator('#chain-verdict').innerText()).toBe('chain ok: 3 decisions');
    await shot('chain');
    const cli = await runCliCaptured([
      'chain',
      'verify',
      '--db',
      t.db,
      '--key',
      owner.keyPath,
      '--json',
    ]);
    expect(cli.code).toBe(0);
    expect(cli.json()).toMatchObject({ ok: true, length: 3, anchored: true });
  });

  it('agent and reader tokens get 403 on every page and post, the owner-hand ones too, and change nothing', async () => {
    const proposed = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'stances',
          text: 'The user reads on a phone.',
          origin: 'saw',
          evidence: { turn: 5, quote: 'I read these on my phone' },
        },
      ],
    });
    const id = proposed.proposed[0]?.id ?? 'none';
    const live = (await me.facts.live())[0]?.id ?? 'none';
    const request = await me.gate.requestForget({
      sessionId,
      turn: 5,
      quote: 'I read these on my phone',
      scope: { kind: 'turn', session: sessionId, seq: 5 },
    });
    const pages = [
      ...['', 'memory', 'dropped', 'ledger', 'arrivals', 'chain', 'history'],
      `history/${sessionId}`,
      `forget?kind=session&session=${sessionId}`,
      `forget?kind=fact&fact=${live}`,
      `forget/request/${request.id}`,
    ];
    const posts: Array<[string, Record<string, string>]> = [
      [`pile/${id}/reject`, {}],
      [`pile/${id}/edit`, { text: 'The user reads on a phone, mostly.', confirm: 'YES' }],
      ['memory/remember', { text: 'The user reads on a phone.', confirm: 'YES' }],
      [`memory/${live}/correct`, { text: 'The user reads on a phone.', confirm: 'YES' }],
      ['forget/plan', { kind: 'phrase', phrase: 'phone' }],
      ['forget', { kind: 'session', session: sessionId, withFacts: '1', confirm: 'YES' }],
      [`forget/request/${request.id}`, { withFacts: '1', confirm: 'YES' }],
      [`forget/request/${request.id}/decline`, {}],
    ];
    const links = (await me.owner.verifyChain()).length;
    for (const secret of [owner.agent, owner.reader]) {
      for (const path of pages) {
        const res = await fetch(`${serve.url}${path}`, {
          headers: { authorization: `Bearer ${secret}` },
        });
        expect(res.status, path).toBe(403);
        expect(await res.text()).toContain('ROLE_FORBIDDEN');
      }
      for (const [path, fields] of posts) {
        const post = await fetch(`${serve.url}${path}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${secret}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams(fields).toString(),
        });
        expect(post.status, path).toBe(403);
        expect(await post.text(), path).toContain('ROLE_FORBIDDEN');
      }
    }
    expect((await me.facts.get(id as FactId)).status).toBe('proposed');
    expect((await me.owner.verifyChain()).length).toBe(links);
    expect((await me.gate.forgetRequests({ status: 'pending' })).map((r) => r.id)).toEqual([
      request.id,
    ]);
    expect((await me.history.turns(sessionId)).every((turn) => turn.forgotten === undefined)).toBe(
      true,
    );
    await me.owner.declineForget({ request: request.id });
  });

  it('a hostile proposal from an agent token renders inert: no script runs, no handler, no javascript: link', async () => {
    const added = await me.turns.add({ sessionId, role: 'user', content: HOSTILE });
    if (!added.recorded) throw new Error('the hostile turn was not recorded');
    const turn = added.turn;
    const res = await fetch(`${serve.url}v1/proposals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.agent}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sessionId,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            text: HOSTILE,
            origin: 'saw',
            evidence: { turn: turn.seq, quote: 'Payday is Friday' },
          },
        ],
      }),
    });
    expect(res.status).toBe(200);
    await page.goto(serve.url);
    const hostile = card('Payday is Friday');
    await expect(hostile.count()).resolves.toBe(1);
    await hostile.locator('p.claim').hover();
    expect(await hostile.locator('p.claim').innerText()).toBe(HOSTILE);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('script:not([src="/assets/htmx.min.js"])').count()).toBe(0);
    expect(await page.locator('[onmouseover], [onerror]').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"], #evil, img[src="x"]').count()).toBe(0);
    await shot('pile-hostile');
  });

  it('rejects a whole night at once, only the proposals the page showed', async () => {
    await page.goto(serve.url);
    const shownIds = await page
      .locator('article.proposal')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-proposal')));
    // one more proposal arrives after the page was rendered: it is not rejected unseen
    const late = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'stances',
          text: 'Answer in English.',
          origin: 'saw',
          evidence: { turn: 5, quote: 'Keep your answers short' },
        },
      ],
    });
    await Promise.all([
      page.waitForURL(serve.url, { waitUntil: 'load' }),
      page.locator('button.reject-night').first().click(),
    ]);
    await page.waitForSelector('.flash.ok');
    expect(await page.locator('#flash').innerText()).toMatch(/rejected \d+ proposals? from/);
    for (const id of shownIds) expect((await me.facts.get(id ?? '')).status).toBe('rejected');
    expect((await me.facts.get(late.proposed[0]?.id ?? ('' as FactId))).status).toBe('proposed');
  });

  it('shows the dropped log with its chart, the ledger due first, and arrivals with their diff', async () => {
    await me.ledger.retract({
      claim: 'The backup ran last night.',
      stoodOn: 'a log line from the day before',
      whyWrong: 'the log was stale',
      corrected: 'The backup did not run last night.',
      procedure: 'look at the backup folder',
      passObservation: 'no file from last night',
      overturnCondition: 'a file from last night',
      dueDays: 0,
    });
    await me.arrival.assemble({ surface: 'chat' });
    await me.tools.register({ name: 'web_search', surfaces: ['chat'] });
    await me.arrival.assemble({ surface: 'chat' });

    await page.goto(`${serve.url}dropped`);
    await expect(page.locator('figure.chart svg rect').count()).resolves.toBeGreaterThan(0);
    expect(await page.locator('table.by-code').innerText()).toContain('QUOTE_NOT_FOUND');
    await shot('dropped');

    await page.goto(`${serve.url}ledger`);
    const first = page.locator('article.retraction').first();
    expect(await first.innerText()).toContain('DUE');
    await expect(first.locator('form.settle').count()).resolves.toBe(1);
    await first.locator('select[name=verdict]').selectOption('stands');
    await first.locator('input[name=outcome]').fill('no file from last night');
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/settle') && r.request().method() === 'POST'),
      first.locator('form.settle button').click(),
    ]);
    await page.waitForSelector('.flash.ok');
    expect(await page.locator('#flash').innerText()).toContain('settled: the retraction stands');
    await shot('ledger');

    await page.goto(`${serve.url}arrivals`);
    const latest = page.locator('article.arrival').first();
    expect(await latest.locator('dl.diff').innerText()).toContain('web_search');
    await shot('arrivals');
  });

  it("an agent's retraction waits on the pile page with the fact it takes down; YES signs it", async () => {
    const stance = (await me.facts.live()).find((f) => f.text === STANCE);
    expect(stance).toBeDefined();
    const r = await me.ledger.retract({
      claim: STANCE,
      stoodOn: 'one request',
      whyWrong: 'the user asked for detail again',
      corrected: 'The user wants full answers.',
      procedure: 'ask the user',
      passObservation: 'the user asks for detail',
      overturnCondition: 'the user asks for short answers',
      factId: stance?.id as FactId,
    });
    await page.goto(serve.url);
    const card = page.locator(`article.dispute[data-retraction="${r.id}"]`);
    expect(await card.innerText()).toContain(STANCE);
    await shot('pile-retraction-waiting');
    await card.locator('input.confirm').fill('YES');
    await Promise.all([
      page.waitForURL(serve.url, { waitUntil: 'load' }),
      card.locator('button.sign-retraction').click(),
    ]);
    expect(await page.locator('#flash').innerText()).toMatch(/^signed retraction /);
    await expect(page.locator(`article.dispute[data-retraction="${r.id}"]`).count()).resolves.toBe(
      0,
    );
    expect((await me.facts.live()).map((f) => f.text)).not.toContain(STANCE);
  });

  it('the lock button forgets the key at once', async () => {
    await page.goto(serve.url);
    await page.click('#lock');
    await page.waitForSelector('#passphrase');
    expect(serve.review.sessions.unlockedCount()).toBe(0);
  });

  it('works without JavaScript: unlock, approve with YES and reject are plain form posts', async () => {
    const proposed = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user reads on a phone.',
          origin: 'saw',
          evidence: { turn: 5, quote: 'I read these on my phone' },
        },
        {
          slot: 'stances',
          text: 'Messages should be short.',
          origin: 'saw',
          evidence: { turn: 5, quote: 'Keep your answers short' },
        },
      ],
    });
    const [approveId, rejectId] = proposed.proposed.map((p) => p.id);
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const p = await plain.newPage();
    try {
      await p.goto(serve.url);
      await p.fill('#passphrase', OWNER_PASSPHRASE);
      await p.click('#unlock');
      await p.waitForSelector('article.proposal');
      const approve = p.locator(`article[data-proposal="${approveId ?? ''}"]`);
      await approve.locator('form.approve input[name=confirm]').fill('YES');
      await approve.locator('button.approve').click();
      await p.waitForSelector('.flash.ok');
      expect(await p.locator('#flash').innerText()).toContain('approved: now active');
      await p.locator(`article[data-proposal="${rejectId ?? ''}"] button.reject`).click();
      await p.waitForSelector('.flash.ok');
      expect(await p.locator('#flash').innerText()).toContain('rejected: now rejected');
      expect((await me.facts.get(approveId ?? ('' as FactId))).status).toBe('active');
      expect((await me.facts.get(rejectId ?? ('' as FactId))).status).toBe('rejected');
    } finally {
      await plain.close();
    }
  });

  it('the idle lock forgets the key, and a decision posted after it changes nothing', async () => {
    const idle = await startServe({
      engine: t.engine,
      port: 0,
      review: { subject: SUBJECT, keyFile: owner.keyPath, idleMs: 1_000 },
    });
    const p = await context.newPage();
    try {
      await p.goto(idle.url);
      await p.fill('#passphrase', OWNER_PASSPHRASE);
      await p.click('#unlock');
      await p.waitForSelector('article.proposal');
      expect(idle.review.sessions.unlockedCount()).toBe(1);
      const id = await p.locator('article.proposal').first().getAttribute('data-proposal');
      await until(() => idle.review.sessions.unlockedCount() === 0, 5_000);
      // the page still shows the forms; posting one now finds the key gone
      await p
        .locator('article.proposal')
        .first()
        .locator('form.approve input[name=confirm]')
        .fill('YES');
      await p.locator('article.proposal').first().locator('button.approve').click();
      await p.waitForSelector('#passphrase');
      expect(await p.locator('#flash').innerText()).toContain('locked');
      expect((await me.facts.get((id ?? '') as FactId)).status).toBe('proposed');
    } finally {
      await p.close();
      await idle.close();
    }
  });
});
