import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { ServerError } from '../server-errors.js';
import {
  EngineError,
  type FactId,
  type ForgetPlan,
  type ForgetRequest,
  type ForgetResult,
  type ForgetScope,
} from '../../src/index.js';
import { countsLine, forgetNote, planCounts, readForgetScope } from '../../src/domain/forget.js';
import type { OwnerSession } from './owner-sessions.js';
import { proposerName } from './review-data.js';
import { requireYes } from './review-kit.js';
import type { RouteKit } from './route-kit.js';
import { forgetConfirmView, scopeWords } from './views/forget-view.js';
import { html, type Markup } from './views/layout.js';

/** How much of a turn the dry run quotes, so the owner knows which one it is. */
const TURN_SHOWN = 500;
/** How many pending requests are looked through for one (the engine's page bound). */
const REQUESTS_READ = 1_000;

/**
 * Forgetting from the page: a dry run the owner reads (GET /forget for a fact, a turn or a
 * session; POST /forget/plan for a phrase, which never goes in an address), then YES forgets it,
 * signed. An agent's request is reviewed the same way, or declined. The form carries the plan's
 * digest: a plan changed since the owner read it is refused, and nothing is forgotten.
 */
export function forgetRoutes(kit: RouteKit): void {
  const { me, sessions, view, post, done } = kit;

  /** What a dry run shows of what the owner named: the fact's words, the turn's, the session's title. */
  const named = async (scope: ForgetScope): Promise<Markup> => {
    switch (scope.kind) {
      case 'fact': {
        const f = await me.facts.get(scope.fact as FactId);
        return html`the fact
          <strong>${f.key === null ? f.slot : `${f.slot} (key ${f.key})`}</strong>:
          <span class="said">“${f.text}”</span>
          <span class="meta"
            >(${f.status}, <code>${f.id}</code>; with the values it replaced or that replaced
            it)</span
          >`;
      }
      case 'turn': {
        const [t] = await me.history.turns(scope.session, { from: scope.seq, to: scope.seq });
        if (t === undefined) return scopeWords(scope);
        return html`turn #${t.seq} (${t.role}) of session <code>${t.sessionId}</code>:
          <span class="said"
            >“${t.content.slice(0, TURN_SHOWN)}${t.content.length > TURN_SHOWN ? '…' : ''}”</span
          >`;
      }
      case 'session': {
        const s = await me.sessions.get(scope.session);
        return html`the session <span class="said">“${s.title ?? '(untitled)'}”</span>
          <code>${s.id}</code>: all ${s.turnCount} ${s.turnCount === 1 ? 'turn' : 'turns'}, and its
          title`;
      }
      case 'phrase':
        return html`everything that holds “${scope.phrase}”
          <span class="meta">(case and spacing ignored)</span>`;
      default:
        return scopeWords(scope);
    }
  };

  const digest = (plan: ForgetPlan): string =>
    createHash('sha256')
      .update(forgetNote(plan.targets))
      .update('\n')
      .update(plan.liveFacts.map((f) => f.id).join('\n'))
      .digest('base64url');

  /** The plan again, as it is now: refused when it is not the one the owner confirmed. */
  const confirmedPlan = async (form: URLSearchParams, scope: ForgetScope) => {
    const plan = await me.owner.forgetPlan(scope);
    if (form.get('plan') !== digest(plan)) {
      throw new ServerError(
        'CONFIRMATION_REQUIRED',
        `what forgetting this removes is not what the page showed (now: ${countsLine(planCounts(plan.targets))}): read the dry run again and confirm that; nothing was forgotten`,
      );
    }
    return plan;
  };

  const forgotten = (r: ForgetResult): string =>
    `forgot ${countsLine(r.removed)} (decision #${r.seq}, forget ${r.forgetId}, signed)` +
    (r.scrub.failed !== undefined
      ? `; removing its bytes from the store's files failed (${r.scrub.failed}): the next forget removes them`
      : '');

  /** A pending request by id: FORGET_REQUEST_NOT_FOUND, or NOT_PENDING when it was answered. */
  const pendingRequest = async (
    id: string,
  ): Promise<{ request: ForgetRequest; requester: string }> => {
    const found = (await me.gate.forgetRequests({ status: 'pending', limit: REQUESTS_READ })).find(
      (r) => r.id === id,
    );
    if (found === undefined) {
      const any = (await me.gate.forgetRequests({ limit: REQUESTS_READ })).find((r) => r.id === id);
      if (any === undefined) {
        throw new EngineError(
          'FORGET_REQUEST_NOT_FOUND',
          `no forget request "${id.slice(0, 128)}"`,
        );
      }
      throw new EngineError('NOT_PENDING', `forget request "${any.id}" is ${any.status}`);
    }
    const names = found.requestedBy.startsWith('agent:')
      ? new Map((await me.owner.tokens()).map((t) => [t.id, t.name]))
      : new Map<string, string | null>();
    return { request: found, requester: proposerName(found.requestedBy, names) };
  };

  const confirmPage = async (
    s: OwnerSession,
    scope: ForgetScope,
    request: { request: ForgetRequest; requester: string } | null,
  ): Promise<Markup> => {
    const [plan, what] = await Promise.all([me.owner.forgetPlan(scope), named(scope)]);
    return forgetConfirmView({
      plan,
      digest: digest(plan),
      named: what,
      fields: request === null ? scopeFields(scope) : {},
      action:
        request === null ? '/forget' : `/forget/request/${encodeURIComponent(request.request.id)}`,
      back: request === null ? backOf(scope) : '/',
      request,
      csrf: s.csrf,
      timeZone: await kit.timeZone(),
    });
  };

  view(
    '/forget',
    async (c, s) =>
      confirmPage(
        s,
        scopeOf((k) => c.req.query(k), false),
        null,
      ),
    '/forget',
  );

  post('/forget/plan', async (c: Context, s, form) =>
    kit.page(
      c,
      s,
      '/forget',
      await confirmPage(
        s,
        scopeOf((k) => form.get(k), true),
        null,
      ),
    ),
  );

  post('/forget', async (c, s, form) => {
    const signer = sessions.signer(s); // locked first: a locked page says so before anything else
    const scope = scopeOf((k) => form.get(k), true);
    requireYes(form, 'forget it: forgetting cannot be undone');
    await confirmedPlan(form, scope);
    const r = await me.owner.forget({
      scope,
      signer,
      ...(form.get('withFacts') === '1' ? { withFacts: true } : {}),
    });
    kit.signed(r);
    return done(c, s, forgotten(r), backOf(scope));
  });

  view(
    '/forget/request/:id',
    async (c, s) => {
      const found = await pendingRequest(c.req.param('id') ?? '');
      return confirmPage(s, readForgetScope(found.request.scope), found);
    },
    '/',
  );

  post('/forget/request/:id', async (c, s, form) => {
    const signer = sessions.signer(s);
    requireYes(form, 'forget it: forgetting cannot be undone');
    const { request } = await pendingRequest(c.req.param('id') ?? '');
    await confirmedPlan(form, readForgetScope(request.scope));
    const r = await me.owner.forget({
      request: request.id,
      signer,
      ...(form.get('withFacts') === '1' ? { withFacts: true } : {}),
    });
    kit.signed(r);
    return done(c, s, `honoured forget request ${request.id}: ${forgotten(r)}`, '/');
  });

  post('/forget/request/:id/decline', async (c, s) => {
    sessions.signer(s); // only the owner answers a request: a locked page says so first
    const r = await me.owner.declineForget({ request: c.req.param('id') ?? '' });
    return done(c, s, `declined forget request ${r.id}: nothing was forgotten`, '/');
  });
}

/**
 * The scope a query or form names (`kind` and its fields), read by the engine's own reader
 * (INVALID_ARGUMENT naming `scope`). A phrase only from a posted form; never the whole subject.
 */
function scopeOf(
  get: (k: string) => string | null | undefined,
  phraseAllowed: boolean,
): ForgetScope {
  const kind = get('kind') ?? '';
  const field = (k: string) => get(k) ?? '';
  if (kind === 'phrase' && !phraseAllowed) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'scope: a phrase is sent by the form on the History page (a post), never in an address; nothing changed',
      { data: { field: 'scope' } },
    );
  }
  if (kind === 'subject') {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'scope: the page does not forget a whole subject (`memledger forget --everything` does); nothing changed',
      { data: { field: 'scope' } },
    );
  }
  const seq = field('seq');
  return readForgetScope({
    kind,
    session: field('session'),
    fact: field('fact'),
    phrase: field('phrase'),
    seq: /^\d{1,10}$/.test(seq) ? Number(seq) : seq,
  });
}

/** The hidden fields that name `scope` again on the post. */
function scopeFields(scope: ForgetScope): Record<string, string> {
  switch (scope.kind) {
    case 'turn':
      return { kind: 'turn', session: scope.session, seq: String(scope.seq) };
    case 'session':
      return { kind: 'session', session: scope.session };
    case 'fact':
      return { kind: 'fact', fact: scope.fact };
    case 'phrase':
      return { kind: 'phrase', phrase: scope.phrase };
    default:
      return { kind: scope.kind };
  }
}

/** Where the owner goes back to: the view the scope was named on. */
function backOf(scope: ForgetScope): string {
  if (scope.kind === 'fact') return '/memory';
  if (scope.kind === 'turn') return `/history/${encodeURIComponent(scope.session)}`;
  return '/history';
}
