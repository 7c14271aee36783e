import { codedError, ServerError } from '../server-errors.js';
import { Hono, type Context } from 'hono';
import { getCookie } from 'hono/cookie';
import {
  EngineError,
  SETTLED_VERDICTS,
  type DecideResult,
  type Engine,
  type SettledVerdict,
  type SubjectHandle,
  type FactId,
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
  pendingRetractions,
  pileNights,
  unanchoredChain,
} from './review-data.js';
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
import { arrivalsView } from './views/arrivals-view.js';
import { chainView, type ChainState } from './views/chain-view.js';
import { droppedView } from './views/dropped-view.js';
import {
  flashBox,
  html,
  layout,
  pageTitle,
  pileBadge,
  pager,
  type Markup,
  type PageFrame,
} from './views/layout.js';
import { ledgerView } from './views/ledger-view.js';
import { memoryView } from './views/memory-view.js';
import { decidedCard, disputesView, nightHead, pileView } from './views/pile-view.js';
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
  /** Hears each decision the page signs (the CLI records the head beside the key file). */
  onDecided?: (head: DecideResult) => void;
  /** Items per page of every list (default 20). */
  pageSize?: number;
  /** Days of the dropped chart (default 14). */
  chartDays?: number;
}

const MAX_BULK = 1_000;
/** What the engine's fact ids look like (UUIDs), with room: anything else names no proposal. */
const PROPOSAL_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

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
  const view = (path: string, body: (c: Context, s: OwnerSession) => Promise<Markup>) =>
    app.get(
      path,
      guarded(async (c, s) => {
        if (!s.unlocked) {
          return render(
            c,
            s,
            path,
            unlockView({ csrf: s.csrf, keyProblem: sessions.keyProblem, idleMinutes: idle() }),
          );
        }
        return render(c, s, path, await body(c, s));
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

  view('/', async (c, s) => {
    const zone = await tz();
    const page = positiveInt(c.req.query('page'), 1);
    const [pile, disputes] = await Promise.all([
      pileNights(me, page, size, zone),
      pendingRetractions(me),
    ]);
    return html`${disputesView(disputes, s.csrf, zone)} ${pileView(pile.nights, s.csrf, zone)}
    ${pager('/', {}, pile.page, pile.pages)}`;
  });

  view('/memory', async (c) => {
    const zone = await tz();
    const slot = c.req.query('slot') || null;
    const page = positiveInt(c.req.query('page'), 1);
    const [live, slots] = await Promise.all([liveMemory(me, slot, page, size), me.slots.list()]);
    return html`${memoryView({ items: live.items, total: live.total, slots, slot, timeZone: zone })}
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

  /**
   * A decided card's night, as the page showed it (its ids, sent along with the card's form):
   * the ones still waiting. Ids that are not proposal ids, or past MAX_BULK, are left out.
   */
  const nightAfter = async (form: URLSearchParams) => {
    const day = form.get('day') ?? '';
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
    const shown = [...new Set(form.getAll('ids'))]
      .filter((id) => PROPOSAL_ID.test(id))
      .slice(0, MAX_BULK);
    const waiting: string[] = [];
    for (const id of shown) {
      const fact = await me.facts.get(id as FactId).catch(() => null);
      if (fact?.status === 'proposed') waiting.push(id);
    }
    return { day, waiting };
  };

  const decide = async (
    c: Context,
    s: OwnerSession,
    proposalId: FactId,
    decision: 'approve' | 'reject',
    supersede: boolean,
    form: URLSearchParams,
  ) => {
    const signer = sessions.signer(s);
    const result = await me.owner.decide({
      proposalId,
      decision,
      signer,
      note: 'review page',
      ...(supersede ? { supersede: true } : {}),
    });
    config.onDecided?.(result);
    const replaced = result.superseded === null ? '' : `; it replaced fact ${result.superseded}`;
    const outcome = `${decision === 'approve' ? 'approved' : 'rejected'}: now ${result.status} (decision #${result.seq}, signed)${replaced}`;
    if (!isHtmx(c)) return done(c, s, outcome, '/');
    const fact = await me.facts.get(proposalId);
    const pile = await me.gate.pileCount();
    const night = await nightAfter(form);
    // the card, and out of band: the badge, the night's count and form, and an empty flash box
    // (an error an earlier card left there is over)
    return c.html(
      html`${decidedCard(fact, outcome)}${pileBadge(pile, true)}${
          night === null ? '' : nightHead(night.day, night.waiting, s.csrf, true)
        }${flashBox(null, true)}<title>${pageTitle(subject, pile)}</title>`,
    );
  };

  post('/pile/:id/approve', async (c, s, form) => {
    sessions.signer(s); // locked first: a locked page says so before anything else
    if ((form.get('confirm') ?? '').trim() !== 'YES') {
      throw new ServerError(
        'CONFIRMATION_REQUIRED',
        'type YES (in capitals) to approve: approving makes it live memory a model is shown; nothing changed',
      );
    }
    return decide(
      c,
      s,
      (c.req.param('id') ?? '') as FactId,
      'approve',
      form.get('supersede') === '1',
      form,
    );
  });

  post('/pile/:id/reject', async (c, s, form) =>
    decide(c, s, (c.req.param('id') ?? '') as FactId, 'reject', false, form),
  );

  post('/retractions/:id/sign', async (c, s, form) => {
    const signer = sessions.signer(s); // locked first: a locked page says so before anything else
    if ((form.get('confirm') ?? '').trim() !== 'YES') {
      throw new ServerError(
        'CONFIRMATION_REQUIRED',
        'type YES (in capitals) to sign: signing takes the fact out of live memory; nothing changed',
      );
    }
    const factId = form.get('factId') ?? '';
    const signed = await me.owner.retract({
      retractionId: (c.req.param('id') ?? '') as RetractionId,
      ...(factId === '' ? {} : { factId: factId as FactId }),
      signer,
    });
    return done(
      c,
      s,
      `signed retraction ${signed.retractionId}: fact ${signed.factId} left live memory (decision #${signed.seq}, signed)`,
      '/',
    );
  });

  post('/pile/reject-night', async (c, s, form) => {
    const signer = sessions.signer(s);
    // only what the page showed: a proposal that arrived after it was rendered is not rejected unseen
    const ids = [...new Set(form.getAll('ids'))];
    if (ids.length === 0 || ids.length > MAX_BULK) {
      throw new EngineError('INVALID_ARGUMENT', `name 1 to ${MAX_BULK} proposals to reject`, {
        data: { field: 'ids' },
      });
    }
    // every id checked before the first decision: a bad one changes nothing, not half a night
    if (!ids.every((id) => PROPOSAL_ID.test(id))) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        'ids: a proposal id is letters, digits and - only',
        {
          data: { field: 'ids' },
        },
      );
    }
    let rejected = 0;
    let skipped = 0;
    for (const proposalId of ids as FactId[]) {
      try {
        const result = await me.owner.decide({
          proposalId,
          decision: 'reject',
          signer,
          note: 'review page: rejected with its night',
        });
        config.onDecided?.(result);
        rejected += 1;
      } catch (err) {
        if (
          err instanceof EngineError &&
          (err.code === 'NOT_PENDING' || err.code === 'PROPOSAL_NOT_FOUND')
        ) {
          skipped += 1;
          continue;
        }
        throw err;
      }
    }
    const day = (form.get('day') ?? '').slice(0, 10);
    return done(
      c,
      s,
      `rejected ${rejected} proposal${rejected === 1 ? '' : 's'} from ${day}${skipped === 0 ? '' : ` (${skipped} skipped: already decided, or not in this pile)`}, each signed`,
      '/',
    );
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
