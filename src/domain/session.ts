/** A conversation of one subject: turns are numbered from 1 within it. */
export interface Session {
  id: string;
  subjectId: string;
  title: string | null;
  /** How many turns the session has recorded (the last seq). */
  turnCount: number;
  createdAt: Date;
}
