import type { PageOptions } from '../domain/input.js';
import type { ActionRecord, ActionStatus } from '../domain/action.js';
import type { Commitment, CommitmentStatus } from '../domain/commitment.js';
import type { ArrivalManifest, ManifestDiff, ShownMemory } from '../domain/manifest.js';
import type { RegisteredTool } from '../domain/tool.js';
import type { RenderedBlock } from './blocks.js';
import type { HostBlockDef } from './host-blocks.js';

/** How the engine assembles arrivals (`EngineConfig.arrival`). */
export interface ArrivalConfig {
  /** The host's identity text: the first static block. */
  identity?: string;
  /** Host blocks, added after the built-in ones in their tiers. */
  blocks?: HostBlockDef[];
  /** Time zone for subjects without one (default: the process's). */
  timeZone?: string;
  /** How long each block may take before its fallback stands in (default 1500 ms). */
  blockTimeoutMs?: number;
}

/** What `arrival.assemble` takes. */
export interface AssembleInput {
  /** Where the agent arrives (`chat`, `wake`, …). */
  surface: string;
  /** The session it arrives in (one of the subject's). */
  sessionId?: string;
  /**
   * The incoming user message (at most 20,000 characters): the `relevant` block recalls the
   * turns and live facts that match it. Blank or absent: no `relevant` block. Not recorded.
   */
  message?: string;
}

/** One assembled arrival: its blocks in tier order, the tools bound, and the whole text. */
export interface Arrival {
  /** The id of the manifest recorded for this arrival (for `diff`). */
  manifestId: string;
  subjectId: string;
  sessionId: string | null;
  surface: string;
  blocks: RenderedBlock[];
  /** The tools bound on the surface, by name. */
  tools: string[];
  /** The prompt text, tiers in order. */
  text: string;
  /**
   * Every live fact and recalled turn the text shows, in the order shown, each with its line
   * and passport (what a host cites beside the model's answer).
   */
  memories: ShownMemory[];
}

/** Which manifests `arrival.manifests` reads. */
export interface ManifestsOptions extends PageOptions {
  /** Only this surface's. */
  surface?: string;
}

/** One page of manifests, and how many match in all. */
export interface ManifestPage {
  total: number;
  manifests: ArrivalManifest[];
}

/** Arrival: the context joined in before the first token, with its manifest. */
export interface ArrivalApi {
  /**
   * Assembles the context for a surface and records its manifest. A session, when named, must
   * be this subject's (SESSION_NOT_FOUND otherwise). With `message` (the incoming user message,
   * at most 20,000 characters; INVALID_ARGUMENT otherwise), the `relevant` block shows what
   * recall finds for it; the message itself is not recorded.
   */
  assemble(input: AssembleInput): Promise<Arrival>;
  /**
   * Compares an arrival (by id, or the latest on a surface) with the previous on its surface;
   * MANIFEST_NOT_FOUND when there is none of this subject's.
   */
  diff(input: { manifestId: string } | { surface: string }): Promise<ManifestDiff>;
  /**
   * The subject's arrival manifests, newest first, optionally of one surface: a page (limit
   * default 20, at most 1000; offset default 0) and how many match in all.
   */
  manifests(options?: ManifestsOptions): Promise<ManifestPage>;
  /** The subject's time zone (the engine's default when none is set). */
  timeZone(): Promise<string>;
  /** Sets the subject's time zone (an IANA name), or clears it with null. */
  setTimeZone(zone: string | null): Promise<void>;
}

/** Tools: what each surface binds; the single source of truth for the capability map. */
export interface ToolsApi {
  /** Registers a tool on the surfaces it declares, or replaces its description and surfaces. */
  register(input: { name: string; description?: string; surfaces: string[] }): Promise<void>;
  /** Removes a tool; false when there was none by that name. */
  remove(name: string): Promise<boolean>;
  /** Every registered tool, by name. */
  list(): Promise<RegisteredTool[]>;
  /** The tools bound on a surface, by name. */
  forSurface(surface: string): Promise<string[]>;
}

/** Commitments: what the agent promised, with their true count on arrival. */
export interface CommitmentsApi {
  /** Adds an open commitment; `due` is a calendar date, YYYY-MM-DD. */
  add(input: { title: string; due?: string }): Promise<Commitment>;
  /** Marks an open commitment done (COMMITMENT_NOT_FOUND, COMMITMENT_NOT_OPEN). */
  done(commitmentId: string): Promise<Commitment>;
  /** Drops an open commitment (COMMITMENT_NOT_FOUND, COMMITMENT_NOT_OPEN). */
  drop(commitmentId: string): Promise<Commitment>;
  /** Commitments, newest first (default limit 100, at most 1000), optionally of one status. */
  list(options?: PageOptions & { status?: CommitmentStatus }): Promise<Commitment[]>;
}

/** Actions: what the agent did, confirmed by the host. */
export interface ActionsApi {
  /**
   * Records an action (status default `confirmed`; `completedAt` defaults to now, and is null
   * for a pending one). Confirmed actions of the last 48 hours show on arrival.
   */
  record(input: {
    tool: string;
    surface: string;
    target: string;
    status?: ActionStatus;
    completedAt?: Date;
  }): Promise<ActionRecord>;
}
