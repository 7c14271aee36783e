import type { Arrival } from './arrival-api.js';
import type { ManifestDiff } from './manifest.js';
import type { ActionRecord, ActionStatus } from '../store/action-sql.js';
import type { Commitment, CommitmentStatus } from '../store/commitment-sql.js';
import type { ToolRegistration } from '../store/tool-sql.js';

/** Arrival: the context joined in before the first token, with its manifest. */
export interface ArrivalApi {
  /** Assembles the context for a surface and records its manifest. */
  assemble(input: { surface: string; sessionId?: string }): Promise<Arrival>;
  /** Compares an arrival (by id, or the latest on a surface) with the previous on its surface. */
  diff(input: { manifestId: string } | { surface: string }): Promise<ManifestDiff>;
  /** The subject's time zone (the engine's default when none is set). */
  timeZone(): Promise<string>;
  /** Sets the subject's time zone (an IANA name), or clears it with null. */
  setTimeZone(zone: string | null): Promise<void>;
}

/** Tools: what each surface binds; the single source of truth for the capability map. */
export interface ToolsApi {
  register(input: { name: string; description?: string; surfaces: string[] }): Promise<void>;
  /** Removes a tool; false when there was none by that name. */
  remove(name: string): Promise<boolean>;
  list(): Promise<ToolRegistration[]>;
  /** The tools bound on a surface. */
  forSurface(surface: string): Promise<string[]>;
}

/** Commitments: what the agent promised, with their true count on arrival. */
export interface CommitmentsApi {
  add(input: { title: string; due?: string }): Promise<Commitment>;
  done(commitmentId: string): Promise<Commitment>;
  drop(commitmentId: string): Promise<Commitment>;
  list(options?: { status?: CommitmentStatus; limit?: number }): Promise<Commitment[]>;
}

/** Actions: what the agent did, confirmed by the host. */
export interface ActionsApi {
  record(input: {
    tool: string;
    surface: string;
    target: string;
    status?: ActionStatus;
    completedAt?: Date;
  }): Promise<ActionRecord>;
}
