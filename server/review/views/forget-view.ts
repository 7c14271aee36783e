import type { ForgetPlan, ForgetRequest, ForgetScope } from '../../../src/index.js';
import { COUNT_NAMES, countsLine, planCounts, turnCount } from '../../../src/domain/forget.js';
import { csrfField, html, shownTime, yesField, type Markup } from './layout.js';

/**
 * Forgetting on the page: the agents' requests on the pile, and the dry run the owner reads
 * before typing YES (what the scope comes to, in numbers, and the live facts it would take down).
 */

/** A scope in words (a request's once honoured is its kind alone). */
export function scopeWords(scope: ForgetScope | { kind: ForgetScope['kind'] }): Markup {
  if ('seq' in scope) return html`turn ${scope.seq} of session <code>${scope.session}</code>`;
  if ('session' in scope) return html`every turn of session <code>${scope.session}</code>`;
  if ('fact' in scope) return html`the fact <code>${scope.fact}</code>`;
  if ('phrase' in scope) return html`everything that holds “${scope.phrase}”`;
  return scope.kind === 'subject' ? html`everything of this subject` : html`a ${scope.kind}`;
}

/** The agents' pending forget requests, above the pile: each to review (a dry run) or decline. */
export function forgetRequestsView(
  requests: ReadonlyArray<{ request: ForgetRequest; requester: string }>,
  csrf: string,
  timeZone: string,
): Markup | string {
  if (requests.length === 0) return '';
  return html`<section class="night forget-requests" aria-label="forget requests waiting for you">
    <div class="night-head">
      <h2>Forget requests <span class="meta">(${requests.length} waiting)</span></h2>
      <p class="meta">
        An agent heard the user ask to forget something. Nothing is forgotten until you read what it
        comes to and sign it.
      </p>
    </div>
    ${requests.map(({ request: r, requester }) => {
      const id = encodeURIComponent(r.id);
      return html`<article class="proposal forget-request" data-request="${r.id}">
        <p class="meta">
          filed by ${requester} · ${shownTime(r.recordedAt, timeZone)} · the user's words, from turn
          #${r.turn} of session <code>${r.sessionId}</code>:
        </p>
        <p class="claim quote">“${r.quote}”</p>
        <p>asks to forget ${scopeWords(r.scope)}</p>
        <a class="review-forget" href="/forget/request/${id}">Review forget…</a>
        <form method="post" action="/forget/request/${id}/decline" class="inline">
          ${csrfField(csrf)}
          <button type="submit" class="decline-forget">Decline</button>
        </form>
      </article>`;
    })}
  </section>`;
}

/** What the owner is asked to confirm, with where the form goes. */
export interface ForgetConfirm {
  plan: ForgetPlan;
  /** The plan's digest: the form carries it, and a plan changed since is refused. */
  digest: string;
  /** What is named, in words, with what it holds now (a fact's text, a turn's words). */
  named: Markup;
  /** The hidden fields that name the scope again on the post. */
  fields: Record<string, string>;
  action: string;
  /** Where "Back" goes. */
  back: string;
  request: { request: ForgetRequest; requester: string } | null;
  csrf: string;
  timeZone: string;
}

const runText = ([s, from, to]: readonly [string, number, number]): Markup =>
  html`session <code>${s}</code>: ${from === to ? `turn ${from}` : `turns ${from}–${to}`}`;

/** The dry run: nothing has changed yet; YES forgets what it lists, signed. */
export function forgetConfirmView(v: ForgetConfirm): Markup {
  const t = v.plan.targets;
  const counts = planCounts(t);
  const empty = Object.values(counts).every((n) => n === 0);
  const live = v.plan.liveFacts;
  return html`<section class="card forget-plan" id="forget-plan">
    <h2>Forget: a dry run <span class="meta">(nothing has changed yet)</span></h2>
    ${
      v.request === null
        ? ''
        : html`<p class="forget-asked">
            ${v.request.requester} asks for it, quoting the user (turn #${v.request.request.turn} of
            session <code>${v.request.request.sessionId}</code>):
            <span class="said">“${v.request.request.quote}”</span>
            <span class="meta">(${shownTime(v.request.request.recordedAt, v.timeZone)})</span>
          </p>`
    }
    <p class="forget-named">To forget: ${v.named}</p>
    ${
      empty
        ? html`<p class="plan-line">Nothing in the store holds it: there is nothing to forget.</p>`
        : html`<p class="plan-line">
              Forgetting it removes <strong id="plan-counts">${countsLine(counts)}</strong>.
            </p>
            <table class="plan-counts">
              <tr>
                <th>what</th>
                <th>how many</th>
              </tr>
              ${Object.entries(counts)
                .filter(([, n]) => n > 0)
                .map(
                  ([k, n]) =>
                    html`<tr data-kind="${k}">
                      <td>${COUNT_NAMES[k]?.[1] ?? k}</td>
                      <td>${n}</td>
                    </tr>`,
                )}
            </table>
            ${
              t.turns.length === 0
                ? ''
                : html`<ul class="plan-turns" aria-label="turns it forgets">
                    ${t.turns.slice(0, 20).map((r) => html`<li>${runText(r)}</li>`)}
                    ${
                      t.turns.length > 20
                        ? html`<li class="meta">… and ${t.turns.length - 20} more runs</li>`
                        : ''
                    }
                  </ul>`
            }`
    }
    ${
      live.length === 0
        ? ''
        : html`<p class="unattested" role="alert">
              ${
                live.length === 1
                  ? '1 live fact rests on it: forgetting it needs that fact forgotten too'
                  : `${live.length} live facts rest on it: forgetting it needs them forgotten too`
              }
              (tick the box), or it is refused.
            </p>
            <ul class="live-facts">
              ${live.map(
                (f) =>
                  html`<li data-fact="${f.id}">
                    <strong>${f.slot}</strong>: <span class="said">${f.text}</span>
                  </li>`,
              )}
            </ul>`
    }
    ${
      empty
        ? ''
        : html`<p class="meta">
              Forgetting cannot be undone. The words are removed from every table, index and file of
              the
              store${
                turnCount(t.turns) === 0
                  ? ''
                  : '; each forgotten turn stays as a tombstone (“forgotten by the owner on …”)'
              };
              a signed forget link, naming ids only, joins the decision chain.
            </p>
            <form method="post" action="${v.action}" class="forget">
              ${csrfField(v.csrf)}
              ${Object.entries(v.fields).map(
                ([k, value]) => html`<input type="hidden" name="${k}" value="${value}" />`,
              )}
              <input type="hidden" name="plan" value="${v.digest}" />
              ${
                live.length === 0
                  ? ''
                  : html`<label
                      ><input type="checkbox" name="withFacts" value="1" />
                      ${live.length === 1 ? 'forget this live fact too' : `forget these ${live.length} live facts too`}</label
                    >`
              }
              ${yesField('forget it', 'forget it: signed, and it cannot be undone')}
              <button type="submit" class="forget">Forget (signed, cannot be undone)</button>
            </form>`
    }
    ${
      v.request === null
        ? ''
        : html`<form
            method="post"
            action="/forget/request/${encodeURIComponent(v.request.request.id)}/decline"
            class="inline"
          >
            ${csrfField(v.csrf)}
            <button type="submit" class="decline-forget">Decline the request</button>
          </form>`
    }
    <p><a href="${v.back}">Back</a></p>
  </section>`;
}
