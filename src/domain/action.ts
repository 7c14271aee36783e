/** An action's state as the host reports it; only confirmed ones reach arrival. */
export const ACTION_STATUSES = ['pending', 'confirmed', 'failed'] as const;
/** One of `ACTION_STATUSES`. */
export type ActionStatus = (typeof ACTION_STATUSES)[number];

/** What the agent did through a tool, recorded by the host (ground truth, not a claim). */
export interface ActionRecord {
  id: string;
  subjectId: string;
  tool: string;
  /** The surface the tool ran on (chat, wake, …). */
  surface: string;
  /** A short summary of what the action touched ("invoice to Acme"). */
  target: string;
  status: ActionStatus;
  /** When it completed; null while pending. */
  completedAt: Date | null;
  recordedAt: Date;
}
