import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { codedError, type FaceErrorCode } from '../server-errors.js';
import { shownInline } from '../../src/rules.js';
import { httpStatus, type InternalErrorReporter } from '../http/http-errors.js';

/**
 * The one place the review page turns a failure into what the owner reads: a code, a message and
 * a status. The page's own refusals answer as the owner's mistakes they are (a wrong passphrase
 * is 401 here, where on the API it could only be the server's set-up); anything else keeps the
 * API's status, and a 5xx never shows its message.
 */
const REVIEW_STATUS: Partial<Record<FaceErrorCode, ContentfulStatusCode>> = {
  BAD_PASSPHRASE: 401,
  PASSPHRASE_REQUIRED: 400,
  REVIEW_LOCKED: 401,
  CSRF_INVALID: 403,
  CONFIRMATION_REQUIRED: 400,
  NO_OWNER_KEY: 409,
  WRONG_KEY: 409,
};

export interface ReviewFailure {
  code: FaceErrorCode;
  message: string;
  status: ContentfulStatusCode;
}

/** What the owner is shown for `err`; failures that are not the owner's doing are reported. */
export function reviewFailure(err: unknown, report: InternalErrorReporter): ReviewFailure {
  const coded = codedError(err);
  if (coded !== null) {
    const status = REVIEW_STATUS[coded.code] ?? httpStatus(coded.code);
    if (status >= 500) {
      report(err);
      return { code: coded.code, message: 'internal error: see the server log', status };
    }
    return { code: coded.code, message: shownInline(coded.message).slice(0, 1_000), status };
  }
  if (err instanceof HTTPException && err.status === 413) {
    return { code: 'BODY_TOO_LARGE', message: 'the form is too large', status: 413 };
  }
  report(err);
  return { code: 'INTERNAL', message: 'internal error: see the server log', status: 500 };
}
