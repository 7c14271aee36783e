import type { Context } from 'hono';
import { EngineError, type FactId, type RetractionId } from '../../src/index.js';
import type { OwnerSession } from './owner-sessions.js';
import { isHtmx, formText, requireYes } from './review-kit.js';
import type { RouteKit } from './route-kit.js';
import { flashBox, html, pageTitle, pileBadge, type Markup } from './views/layout.js';
import { editedCard, editOutcome, MAX_FACT_TEXT } from './views/owner-word-view.js';
import { decidedCard, nightHead } from './views/pile-view.js';

const MAX_BULK = 1_000;
/** What the engine's fact ids look like (UUIDs), with room: anything else names no proposal. */
const PROPOSAL_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/**
 * The pile's decisions: approve (typed YES), approve the owner's edit of the words (typed YES,
 * re-gated), reject, reject a night, and sign a waiting retraction. Each is signed with the key
 * this session opened; a card decided by htmx is swapped for its outcome in place.
 */
export function pileRoutes(kit: RouteKit): void {
  const { me, sessions, post, done } = kit;

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

  /** A card's answer to htmx: the card, and out of band the badge, its night, an empty flash. */
  const decidedInPlace = async (
    c: Context,
    s: OwnerSession,
    card: Markup,
    form: URLSearchParams,
  ) => {
    const pile = await me.gate.pileCount();
    const night = await nightAfter(form);
    // the card, and out of band: the badge, the night's count and form, and an empty flash box
    // (an error an earlier card left there is over)
    return c.html(
      html`${card}${pileBadge(pile, true)}${
          night === null ? '' : nightHead(night.day, night.waiting, s.csrf, true)
        }${flashBox(null, true)}<title>${pageTitle(kit.subject, pile)}</title>`,
    );
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
    kit.signed(result);
    const replaced = result.superseded === null ? '' : `; it replaced fact ${result.superseded}`;
    const outcome = `${decision === 'approve' ? 'approved' : 'rejected'}: now ${result.status} (decision #${result.seq}, signed)${replaced}`;
    if (!isHtmx(c)) return done(c, s, outcome, '/');
    return decidedInPlace(c, s, decidedCard(await me.facts.get(proposalId), outcome), form);
  };

  post('/pile/:id/approve', async (c, s, form) => {
    sessions.signer(s); // locked first: a locked page says so before anything else
    requireYes(form, 'approve: approving makes it live memory a model is shown');
    return decide(
      c,
      s,
      (c.req.param('id') ?? '') as FactId,
      'approve',
      form.get('supersede') === '1',
      form,
    );
  });

  // the owner's words in place of the proposal's: re-gated against the same evidence
  // (EDIT_DROPPED, nothing signed, the card still waiting, when the gate drops them)
  post('/pile/:id/edit', async (c, s, form) => {
    const signer = sessions.signer(s);
    const text = formText(form, 'text', MAX_FACT_TEXT, 'say what to approve');
    requireYes(form, 'approve your words: approving makes them live memory a model is shown');
    const proposalId = (c.req.param('id') ?? '') as FactId;
    const original = await me.facts.get(proposalId);
    const result = await me.owner.decide({
      proposalId,
      decision: 'approve',
      text,
      signer,
      note: 'review page: edited',
      ...(form.get('supersede') === '1' ? { supersede: true } : {}),
    });
    kit.signed(result);
    const approved = await me.facts.get(result.proposalId as FactId);
    const outcome = editOutcome(result, original, approved);
    if (!isHtmx(c)) return done(c, s, outcome, '/');
    return decidedInPlace(c, s, editedCard(original, approved, outcome), form);
  });

  post('/pile/:id/reject', async (c, s, form) =>
    decide(c, s, (c.req.param('id') ?? '') as FactId, 'reject', false, form),
  );

  post('/retractions/:id/sign', async (c, s, form) => {
    const signer = sessions.signer(s); // locked first: a locked page says so before anything else
    requireYes(form, 'sign: signing takes the fact out of live memory');
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
        kit.signed(result);
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
}
