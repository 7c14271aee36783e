import { INPUT_LIMITS } from '../../src/index.js';
import { positiveInt } from './review-kit.js';
import type { RouteKit } from './route-kit.js';
import { sessionsView, sessionView } from './views/history-view.js';

/**
 * History on the page: the sessions, newest first, and one session's turns in order, paged as
 * every list is; each links to its dry run of forgetting (forget-routes.ts).
 */
export function historyRoutes(kit: RouteKit): void {
  const { me, size, view } = kit;
  // a page past this would ask for an offset the store does not take
  const lastPage = Math.floor(INPUT_LIMITS.maxInt / size);

  view('/history', async (c, s) => {
    const page = Math.min(positiveInt(c.req.query('page'), 1), lastPage);
    const found = await me.sessions.list({ limit: size + 1, offset: (page - 1) * size });
    return sessionsView({
      sessions: found.slice(0, size),
      page,
      more: found.length > size,
      csrf: s.csrf,
      timeZone: await kit.timeZone(),
    });
  });

  view(
    '/history/:session',
    async (c) => {
      const session = await me.sessions.get(c.req.param('session') ?? '');
      const pages = Math.max(1, Math.ceil(session.turnCount / size));
      const page = Math.min(positiveInt(c.req.query('page'), 1), pages);
      const turns =
        session.turnCount === 0
          ? []
          : await me.history.turns(session.id, {
              from: (page - 1) * size + 1,
              to: Math.min(page * size, session.turnCount),
            });
      return sessionView({ session, turns, page, pages, timeZone: await kit.timeZone() });
    },
    '/history',
  );
}
