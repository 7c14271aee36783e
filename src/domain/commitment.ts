/** Where a commitment stands: open until it is done or dropped. */
export const COMMITMENT_STATUSES = ['open', 'done', 'dropped'] as const;
/** One of `COMMITMENT_STATUSES`. */
export type CommitmentStatus = (typeof COMMITMENT_STATUSES)[number];

/** Something the agent promised its subject; arrival shows the true count of open ones. */
export interface Commitment {
  id: string;
  subjectId: string;
  title: string;
  /** The due DATE as written, YYYY-MM-DD (formatted by SQL, never through a JS Date). */
  due: string | null;
  status: CommitmentStatus;
  createdAt: Date;
  /** When the status last changed (the creation time while it is open). */
  statusAt: Date;
}
