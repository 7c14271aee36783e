import type { FactId } from '../../src/index.js';
import { formText, optionalFormField, requireYes } from './review-kit.js';
import type { RouteKit } from './route-kit.js';
import { MAX_FACT_KEY, MAX_FACT_TEXT } from './views/owner-word-view.js';

/** The longest slot name (INPUT_LIMITS.slotLength). */
const MAX_SLOT = 64;

/**
 * The owner's own words on /memory: a fact remembered as the owner says it, and a live fact
 * corrected (the owner's words supersede it). Each is checked by the gate as any proposal and
 * approved with one signed link; the gate's drop is EDIT_DROPPED, and nothing is signed.
 */
export function ownerWordRoutes(kit: RouteKit): void {
  const { me, sessions, post, done } = kit;

  const replaced = (superseded: string | null) =>
    superseded === null ? '' : `; it replaced fact ${superseded}`;

  post('/memory/remember', async (c, s, form) => {
    const signer = sessions.signer(s); // locked first: a locked page says so before anything else
    const text = formText(form, 'text', MAX_FACT_TEXT, 'say what to remember');
    const key = optionalFormField(form, 'key', MAX_FACT_KEY);
    const slot = optionalFormField(form, 'slot', MAX_SLOT);
    requireYes(form, 'remember it: it is signed, and live memory at once');
    const r = await me.owner.remember({
      text,
      ...(key === undefined ? {} : { key }),
      ...(slot === undefined ? {} : { slot }),
      signer,
    });
    kit.signed(r);
    return done(
      c,
      s,
      `remembered in your words: now ${r.status} (decision #${r.seq}, signed), recorded as turn ${r.turn} of session ${r.sessionId}${replaced(r.superseded)}`,
      '/memory',
    );
  });

  post('/memory/:id/correct', async (c, s, form) => {
    const signer = sessions.signer(s);
    const text = formText(form, 'text', MAX_FACT_TEXT, 'say what is right');
    requireYes(form, 'correct it: your words replace it in live memory, signed');
    const corrects = (c.req.param('id') ?? '') as FactId;
    const r = await me.owner.remember({ text, corrects, signer });
    kit.signed(r);
    return done(
      c,
      s,
      `corrected in your words: now ${r.status} (decision #${r.seq}, signed), recorded as turn ${r.turn} of session ${r.sessionId}${replaced(r.superseded)}`,
      '/memory',
    );
  });
}
