import { codedError, ServerError } from '../server-errors.js';
import { Hono, type Context } from 'hono';
import { getCookie } from 'hono/cookie';
import {
  EngineError,
  SETTLED_VERDICTS,
  type Engine,
  type SettledVerdict,
  type SubjectHandle,
  type RetractionId,
} from '../../src/index.js';
import type { InternalErrorReporter } from '../http/http-errors.js';
import { DEFAULT_IDLE_MS, OwnerSessions, type OwnerSession } from './owner-sessions.js';
import { htmx, stylesheet, type Asset } from './review-assets.js';
import {
  arrivalItems,
  chartDays,
  ledgerItems,
  liveMemory,
  pendingForgets,
  pendingRetractions,
  pileNights,
  unanchoredChain,
} from './review-data.js';
import { forgetRoutes } from './forget-routes.js';
import { exportRoutes } from './export-routes.js';
import { historyRoutes } from './history-routes.js';
import { ownerWordRoutes } from './owner-word-routes.js';
import { pileRoutes } from './pile-routes.js';
import { reviewFailure } from './review-errors.js';
import {
  COOKIE,
  isHtmx,
  isLoopbackAddress,
  positiveInt,
  readForm,
  remoteAddress,
  SECURITY_HEADERS,
  setSessionCookie,
} from './review-kit.js';
import type { RouteKit, SignedHead } from './route-kit.js';
import { arrivalsView } from './views/arrivals-view.js';
import { chainView, type ChainState } from './views/chain-view.js';
import { droppedView } from './views/dropped-view.js';
import { forgetRequestsView } from './views/forget-view.js';
import { flashBox, html, layout, pager, type Markup, type PageFrame } from './views/layout.js';
import { ledgerView } from './views/ledger-view.js';
import { memoryView } from './views/memory-view.js';
import { disputesView, pileView } from './views/pile-view.js';
import { unlockView } from './views/unlock-view.js';

export interface ReviewConfig {
  /** The subject whose pile the page reviews (default `owner`). */
  subject?: string;
  /** The owner key file of that subject; null when none was found (`keyProblem` says why). */
  keyFile: string | null;
  keyProblem?: string;
  /** How long the key stays open without a request from the page (default 10 minutes). */
  idleMs?: number;
  /** The wait after the first wrong passphrase, doubling after each (default 1 s). */
  unlockDelayBaseMs?: number;
  /** The chain as the page shows it, anchored as `chain verify` anchors it (the CLI's own). */
  verifyChain?: (me: SubjectHandle) => Promise<ChainState>;
  /**
   * Hears each head the page signs: a decision, an edited approval, a remembered fact, a forget
   * (the CLI records the head beside the key file).
   */
  onDecided?: (head: SignedHead) => void;
  /** Items per page of every list (default 20). */
  pageSize?: number;
  /** Days of the dropped chart (default 14). */
  chartDays?: number;
}

type Handler = (c: Context, s: OwnerSession) => Promise<Response>;

export interface ReviewApp {
  readonly app: Hono;
  readonly sessions: OwnerSessions;
  readonly subject: string;
  /** Forgets every open key. */
  close(): void;
}

/**
 * The owner's review page, at `/` of `memledger serve`: server-rendered, every asset served by
 * the server, every flow a plain form post (htmx only makes them partial). It answers only a
 * browser session that unlocked the owner key; a request with a token is refused outright.
 */
export function createReviewApp(
  engine: Engine,
  config: ReviewConfig,
  report: InternalErrorReporter,
): ReviewApp {
  const subject = config.subject ?? 'owner';
  const me = engine.subject(subject);
  const size = config.pageSize ?? 20;
  const days = config.chartDays ?? 14;
  const sessions = new OwnerSessions({
    keyFile: config.keyFile,
    ...(config.keyProblem === undefined ? {} : { keyProblem: config.keyProblem }),
    expectedKeyId: async () => (await me.owner.key())?.keyId ?? null,
    idleMs: config.idleMs ?? DEFAULT_IDLE_MS,
    ...(config.unlockDelayBaseMs === undefined
      ? {}
      : { unlockDelayBaseMs: config.unlockDelayBaseMs }),
  });
  const verify = config.verifyChain ?? unanchoredChain;
  const app = new Hono();

  const frame = async (s: OwnerSession, current: string): Promise<PageFrame> => {
    const flash = s.flash;
    s.flash = null;
    return {
      subject,
      pile: s.unlocked ? await me.gate.pileCount() : null,
      csrf: s.csrf,
      unlocked: s.unlocked,
      current,
      flash,
    };
  };

  const render = async (c: Context, s: OwnerSession, current: string, body: Markup, status = 200) =>
    c.html(layout(await frame(s, current), body), status as 200);

  /** Every route: headers, the session cookie, tokens refused, failures shown as the owner reads them. */
  const guarded = (handler: Handler) => async (c: Context) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.header(k, v);
    // A request another site made (an image on a page of another local port is `same-site`)
    // is served as a stranger's: it neither uses the owner's session nor keeps its key open.
    const site = c.req.header('sec-fetch-site');
    const foreign = site === 'cross-site' || site === 'same-site';
    const cookie = foreign ? undefined : getCookie(c, COOKIE);
    const s = sessions.session(cookie);
    if (s.id !== cookie && !foreign) setSessionCookie(c, s);
    try {
      if (c.req.header('authorization') !== undefined) {
        throw new ServerError(
          'ROLE_FORBIDDEN',
          'the review page is the owner’s: agent and reader tokens never open it (decisions need the owner key)',
        );
      }
      return await handler(c, s);
    } catch (err) {
      const failure = reviewFailure(err, report);
      const retry = codedError(err)?.data?.retryAfterSeconds;
      if (typeof retry === 'number') c.header('Retry-After', String(retry));
      // the rest of a body too large is not read: the connection ends with the answer
      if (failure.code === 'BODY_TOO_LARGE') c.header('Connection', 'close');
      if (failure.code === 'REVIEW_LOCKED' && isHtmx(c)) {
        s.flash = { kind: 'error', text: failure.message };
        c.header('HX-Redirect', '/');
        return c.body(null, 204);
      }
      const text = `${failure.code}: ${failure.message}`;
      if (isHtmx(c)) {
        c.header('HX-Retarget', '#flash');
        c.header('HX-Reswap', 'outerHTML');
        return c.html(flashBox({ kind: 'error', text }), failure.status);
      }
      s.flash = { kind: 'error', text };
      const body = s.unlocked
        ? html`<p><a href="/">Back to the pile</a></p>`
        : unlockView({ csrf: s.csrf, keyProblem: sessions.keyProblem, idleMinutes: idle() });
      return render(c, s, '', body, failure.status);
    }
  };
  const idle = () => Math.max(1, Math.round(sessions.idleMs / 60_000));

  /** A GET view: the unlock form until this session holds the key. */
  const view = (
    path: string,
    body: (c: Context, s: OwnerSession) => Promise<Markup>,
    current = path,
  ) =>
    app.get(
      path,
      guarded(async (c, s) => {
        if (!s.unlocked) {
          return render(
            c,
            s,
            current,
            unlockView({ csrf: s.csrf, keyProblem: sessions.keyProblem, idleMinutes: idle() }),
          );
        }
        return render(c, s, current, await body(c, s));
      }),
    );

  /** A form post: same-origin, urlencoded, bounded, carrying this session's CSRF token. */
  const post = (
    path: string,
    handler: (c: Context, s: OwnerSession, form: URLSearchParams) => Promise<Response>,
  ) =>
    app.post(
      path,
      guarded(async (c, s) => {
        const site = c.req.header('sec-fetch-site');
        if (site !== undefined && site !== 'same-origin' && site !== 'none') {
          throw new ServerError('CSRF_INVALID', 'a form from another site changes nothing here');
        }
        const form = await readForm(c);
        if (!sessions.csrfMatches(s, form.get('_csrf'))) {
          throw new ServerError(
            'CSRF_INVALID',
            'the form did not carry this page’s CSRF token (reload the page and try again); nothing changed',
          );
        }
        return handler(c, s, form);
      }),
    );

  const done = (c: Context, s: OwnerSession, text: string, to: string) => {
    s.flash = { kind: 'ok', text };
    return c.redirect(to, 303);
  };

  const tz = () => me.arrival.timeZone();

  const kit: RouteKit = {
    me,
    subject,
    sessions,
    size,
    view: (path, body, current) => void view(path, body, current),
    post: (path, handler) => void post(path, handler),
    page: (c, s, current, body) => render(c, s, current, body),
    done,
    timeZone: tz,
    signed: (head) => config.onDecided?.(head),
  };

  view('/', async (c, s) => {
    const zone = await tz();
    const page = positiveInt(c.req.query('page'), 1);
    const [pile, disputes, forgets] = await Promise.all([
      pileNights(me, page, size, zone),
      pendingRetractions(me),
      pendingForgets(me),
    ]);
    return html`${disputesView(disputes, s.csrf, zone)} ${forgetRequestsView(forgets, s.csrf, zone)}
    ${pileView(pile.nights, s.csrf, zone)} ${pager('/', {}, pile.page, pile.pages)}`;
  });

  view('/memory', async (c, s) => {
    const zone = await tz();
    const slot = c.req.query('slot') || null;
    const page = positiveInt(c.req.query('page'), 1);
    const [live, slots] = await Promise.all([liveMemory(me, slot, page, size), me.slots.list()]);
    return html`${memoryView({ items: live.items, total: live.total, slots, slot, timeZone: zone, csrf: s.csrf })}
    ${pager('/memory', slot === null ? {} : { slot }, live.page, live.pages)}`;
  });

  view('/dropped', async (c) => {
    const zone = await tz();
    const page = positiveInt(c.req.query('page'), 1);
    const [counts, total] = await Promise.all([
      me.gate.droppedByDay({ days }),
      me.gate.droppedCount(),
    ]);
    const pages = Math.max(1, Math.ceil(total / size));
    const p = Math.min(page, pages);
    const drops = await me.gate.dropped({ limit: size, offset: (p - 1) * size });
    const { first, last } = chartDays(new Date(), days, zone);
    return html`${droppedView({ counts, first, last, total, drops, timeZone: zone })}
    ${pager('/dropped', {}, p, pages)}`;
  });

  view('/ledger', async (c, s) => {
    const zone = await tz();
    const page = positiveInt(c.req.query('page'), 1);
    const l = await ledgerItems(me, page, size);
    return html`${ledgerView({ items: l.items, total: l.total, dueCount: l.dueCount, csrf: s.csrf, timeZone: zone })}
    ${pager('/ledger', {}, l.page, l.pages)}`;
  });

  view('/arrivals', async (c) => {
    const zone = await tz();
    const surface = c.req.query('surface') || null;
    const page = positiveInt(c.req.query('page'), 1);
    const a = await arrivalItems(me, surface, page, size);
    return html`${arrivalsView({ items: a.items, total: a.total, surface, timeZone: zone })}
    ${pager('/arrivals', surface === null ? {} : { surface }, a.page, a.pages)}`;
  });

  view('/chain', async () => {
    const [state, integrity] = await Promise.all([verify(me), me.facts.integrity()]);
    return chainView(state, integrity);
  });

  post('/unlock', async (c, s, form) => {
    // the passphrase travels in the form: only from this machine (or a TLS proxy on it)
    const from = remoteAddress(c);
    if (from !== null && !isLoopbackAddress(from)) {
      throw new ServerError(
        'REMOTE_NOT_ALLOWED',
        'the review page unlocks only from this machine: the passphrase would cross the network in the clear (put a TLS proxy on this machine in front)',
      );
    }
    const passphrase = form.get('passphrase') ?? '';
    const next = await sessions.unlock(s, passphrase);
    setSessionCookie(c, next);
    return done(c, next, `unlocked: the owner key is open for ${idle()} idle minutes`, '/');
  });

  post('/lock', async (c, s) => {
    sessions.lock(s);
    return done(c, s, 'locked: the owner key was forgotten', '/');
  });

  post('/ledger/:id/settle', async (c, s, form) => {
    sessions.signer(s);
    const retractionId = (c.req.param('id') ?? '') as RetractionId;
    let result;
    if (form.get('runProbe') === '1') {
      result = await me.ledger.settle({ retractionId, runProbe: true, by: 'owner (review page)' });
    } else {
      const verdict = form.get('verdict') ?? '';
      if (!(SETTLED_VERDICTS as readonly string[]).includes(verdict)) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `verdict must be one of ${SETTLED_VERDICTS.join(', ')}`,
          {
            data: { field: 'verdict' },
          },
        );
      }
      result = await me.ledger.settle({
        retractionId,
        verdict: verdict as SettledVerdict,
        outcome: form.get('outcome') ?? '',
        by: 'owner (review page)',
      });
    }
    return done(c, s, `settled: the retraction ${result.verdict}`, '/ledger');
  });

  pileRoutes(kit);
  ownerWordRoutes(kit);
  forgetRoutes(kit);
  historyRoutes(kit);
  exportRoutes(kit, engine);

  const serveAsset = (path: string, load: () => Asset) =>
    app.get(path, (c) => {
      const a = load();
      c.header('Content-Type', a.type);
      c.header('ETag', a.etag);
      c.header('Cache-Control', 'no-cache');
      c.header('X-Content-Type-Options', 'nosniff');
      if (c.req.header('if-none-match') === a.etag) return c.body(null, 304);
      return c.body(a.body);
    });
  serveAsset('/assets/htmx.min.js', htmx);
  serveAsset('/assets/review.css', stylesheet);

  return { app, sessions, subject, close: () => sessions.close() };
}
