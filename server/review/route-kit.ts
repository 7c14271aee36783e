import type { Context } from 'hono';
import type { SubjectHandle } from '../../src/index.js';
import type { OwnerSession, OwnerSessions } from './owner-sessions.js';
import type { Markup } from './views/layout.js';

/** A head the page signed: what the CLI records beside the key file. */
export interface SignedHead {
  seq: number;
  hash: string;
  root: string;
}

/**
 * What a module of the review page's routes is given by `createReviewApp`: the one way to serve
 * a view, the one way to take a form, and the subject they act on. Routes are in review-app.ts
 * (views, unlock), pile-routes.ts, forget-routes.ts, owner-word-routes.ts and history-routes.ts.
 */
export interface RouteKit {
  readonly me: SubjectHandle;
  readonly subject: string;
  readonly sessions: OwnerSessions;
  /** Items per page of every list. */
  readonly size: number;
  /** A GET view: the unlock form until this session holds the key; `current` marks the nav. */
  view(
    path: string,
    body: (c: Context, s: OwnerSession) => Promise<Markup>,
    current?: string,
  ): void;
  /** A form post: same-origin, urlencoded, bounded, carrying this session's CSRF token. */
  post(
    path: string,
    handler: (c: Context, s: OwnerSession, form: URLSearchParams) => Promise<Response>,
  ): void;
  /** A whole page around `body` (a post that answers with a view, as a dry run does). */
  page(c: Context, s: OwnerSession, current: string, body: Markup): Promise<Response>;
  /** A post's answer: its outcome in the flash box, and a redirect (303) to `to`. */
  done(c: Context, s: OwnerSession, text: string, to: string): Response;
  /** The subject's time zone, for every date the page shows. */
  timeZone(): Promise<string>;
  /** Hears each head the page signs (ReviewConfig.onDecided). */
  signed(head: SignedHead): void;
}
