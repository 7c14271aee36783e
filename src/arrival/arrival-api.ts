import { EngineError } from '../domain/errors.js';
import { renderFactLine } from '../domain/fact-render.js';
import { requireId } from '../domain/turn.js';
import {
  ActionSql,
  ACTION_STATUSES,
  type ActionRecord,
  type ActionStatus,
} from '../store/action-sql.js';
import { ArrivalSql } from '../store/arrival-sql.js';
import {
  CommitmentSql,
  COMMITMENT_STATUSES,
  type Commitment,
  type CommitmentStatus,
} from '../store/commitment-sql.js';
import { FactSql } from '../store/fact-sql.js';
import { SessionSql } from '../store/session-sql.js';
import type { SqlClient } from '../store/sql-client.js';
import { SubjectSql } from '../store/subject-sql.js';
import { ToolSql, type ToolRegistration } from '../store/tool-sql.js';
import {
  DEFAULT_BLOCK_TIMEOUT_MS,
  runBlocks,
  type ArrivalBlock,
  type RenderedBlock,
} from './blocks.js';
import { builtinBlocks, type ArrivalReader } from './builtin-blocks.js';
import { hostBlock, type HostBlockDef } from './host-blocks.js';
import { diffManifests, type ArrivalManifest, type ManifestDiff } from './manifest.js';
import { arrivalText } from './prompt-formats.js';

export interface ArrivalConfig {
  /** The host's identity text: the first static block. */
  identity?: string;
  /** Host blocks, added after the built-in ones in their tiers. */
  blocks?: HostBlockDef[];
  /** Time zone for subjects without one (default: the process's). */
  timeZone?: string;
  blockTimeoutMs?: number;
}

export interface Arrival {
  manifestId: string;
  subjectId: string;
  sessionId: string | null;
  surface: string;
  blocks: RenderedBlock[];
  tools: string[];
  text: string;
}

export interface ArrivalApi {
  arrival: {
    /** Assembles the context for a surface before the first token, and records its manifest. */
    assemble(input: { surface: string; sessionId?: string; subject?: string }): Promise<Arrival>;
    /** Compares an arrival (default: the latest on the surface) with the previous on its surface. */
    diff(input: { manifestId?: string; surface?: string; subject?: string }): Promise<ManifestDiff>;
    addBlock(def: HostBlockDef): void;
  };
  tools: {
    register(input: {
      subject?: string;
      name: string;
      description?: string;
      surfaces: string[];
    }): Promise<void>;
    remove(input: { subject?: string; name: string }): Promise<boolean>;
    list(options?: { subject?: string }): Promise<ToolRegistration[]>;
    /** The single source of truth for what a surface binds. */
    toolsFor(surface: string, options?: { subject?: string }): Promise<string[]>;
  };
  commitments: {
    add(input: { subject?: string; title: string; due?: string }): Promise<Commitment>;
    done(id: string): Promise<Commitment>;
    drop(id: string): Promise<Commitment>;
    list(options?: { subject?: string; status?: string; limit?: number }): Promise<Commitment[]>;
  };
  actions: {
    record(input: {
      subject?: string;
      tool: string;
      surface: string;
      target: string;
      status?: string;
      completedAt?: Date;
    }): Promise<ActionRecord>;
  };
  timeZone: {
    set(input: { subject?: string; zone: string | null }): Promise<void>;
    get(options?: { subject?: string }): Promise<string>;
  };
}

export interface ArrivalApiDeps {
  client: SqlClient;
  clock: () => Date;
  newId: () => string;
  sha256Hex: (text: string) => string;
  defaultSubject: string;
  config?: ArrivalConfig;
}

const SURFACE = /^[a-z][a-z0-9_-]{0,63}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** YYYY-MM-DD naming a day that exists (2026-02-30 does not). */
function isCalendarDate(s: string): boolean {
  if (!DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

export function createArrivalApi(deps: ArrivalApiDeps): ArrivalApi {
  const { client, clock, newId } = deps;
  const sql = new ArrivalSql(client);
  const facts = new FactSql(client);
  const sessions = new SessionSql(client);
  const subjects = new SubjectSql(client);
  const toolSql = new ToolSql(client);
  const commitments = new CommitmentSql(client);
  const actionSql = new ActionSql(client);
  const config = deps.config ?? {};
  const processZone = config.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const timeoutMs = config.blockTimeoutMs ?? DEFAULT_BLOCK_TIMEOUT_MS;
  const readOnly = (q: string, p: readonly unknown[]) => sql.readOnly(q, p);
  const hostBlocks: ArrivalBlock[] = (config.blocks ?? []).map((b) => hostBlock(b, readOnly));

  const reader: ArrivalReader = {
    async liveFactLines(subjectId, limit, zone) {
      const live = await facts.recentLive(subjectId, limit);
      return { lines: live.facts.map((f) => renderFactLine(f, zone)), total: live.total };
    },
    recentSessions: (s, except, zone, limit) => sql.recentSessions(s, except, zone, limit),
    async sessionTurns(id) {
      return (await sessions.get(id))?.turnCount ?? 0;
    },
    settled: (s, now, zone) => sql.settled(s, now, zone),
    formatTime: (at, zone) => sql.formatTime(at, zone),
  };

  const subjectOf = async (subject: string | undefined): Promise<string> => {
    const id = requireId(subject ?? deps.defaultSubject, 'subject');
    if ((await subjects.get(id)) === null)
      throw new EngineError('SUBJECT_NOT_FOUND', `subject "${id}" does not exist`);
    return id;
  };
  const surfaceOf = (surface: string): string => {
    if (!SURFACE.test(surface)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `surface "${surface}": use a-z, 0-9, _ and - (e.g. chat, wake)`,
      );
    }
    return surface;
  };
  const zoneOf = async (subjectId: string) => (await sql.timeZone(subjectId)) ?? processZone;
  const closeCommitment = async (id: string, status: 'done' | 'dropped') => {
    const closed = await commitments.close(id, status, clock());
    if (closed !== null) return closed;
    const existing = await commitments.get(id);
    if (existing === null) throw new EngineError('COMMITMENT_NOT_FOUND', `no commitment "${id}"`);
    throw new EngineError(
      'COMMITMENT_NOT_OPEN',
      `commitment "${id}" is already ${existing.status}`,
    );
  };

  return {
    arrival: {
      async assemble(input) {
        const surface = surfaceOf(input.surface);
        let subjectId: string;
        let sessionId: string | null = null;
        if (input.sessionId !== undefined) {
          const session = await sessions.get(requireId(input.sessionId, 'session'));
          if (session === null)
            throw new EngineError('SESSION_NOT_FOUND', `no session "${input.sessionId}"`);
          subjectId = session.subjectId;
          sessionId = session.id;
        } else {
          subjectId = await subjectOf(input.subject);
        }
        const now = clock();
        const [tools, timeZone] = await Promise.all([
          toolSql.toolsFor(subjectId, surface),
          zoneOf(subjectId),
        ]);
        const ctx = { subjectId, sessionId, surface, now, timeZone, tools };
        const blocks = await runBlocks(
          [
            ...builtinBlocks(reader, { identity: config.identity ?? null, timeoutMs }),
            ...hostBlocks,
          ],
          ctx,
          deps.sha256Hex,
        );
        const text = arrivalText(blocks);
        const manifest: ArrivalManifest = {
          id: newId(),
          subjectId,
          surface,
          sessionId,
          blocks: blocks.map((b) => ({
            name: b.name,
            tier: b.tier,
            sha256: b.sha256,
            degraded: b.degraded,
            chars: b.text.length,
          })),
          tools,
          toolCount: tools.length,
          degraded: blocks.filter((b) => b.degraded).map((b) => b.name),
          totalChars: text.length,
          createdAt: now,
        };
        await sql.recordManifest(manifest);
        return { manifestId: manifest.id, subjectId, sessionId, surface, blocks, tools, text };
      },
      async diff(input) {
        let target: ArrivalManifest | null;
        if (input.manifestId !== undefined) {
          target = await sql.manifest(input.manifestId);
          if (target === null)
            throw new EngineError('MANIFEST_NOT_FOUND', `no arrival "${input.manifestId}"`);
        } else {
          if (input.surface === undefined)
            throw new EngineError('INVALID_ARGUMENT', 'name an arrival id or a surface');
          target = await sql.previousManifest(
            await subjectOf(input.subject),
            surfaceOf(input.surface),
            null,
          );
          if (target === null)
            throw new EngineError(
              'MANIFEST_NOT_FOUND',
              `no arrival on surface "${input.surface}" yet`,
            );
        }
        return diffManifests(
          await sql.previousManifest(target.subjectId, target.surface, target),
          target,
        );
      },
      addBlock(def) {
        hostBlocks.push(hostBlock(def, readOnly));
      },
    },
    tools: {
      async register(input) {
        const subjectId = await subjectOf(input.subject);
        if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(input.name)) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `tool name "${input.name}": use letters, digits and _ . : -`,
          );
        }
        if (input.surfaces.length === 0)
          throw new EngineError('INVALID_ARGUMENT', 'a tool declares at least one surface');
        const surfaces = [...new Set(input.surfaces.map(surfaceOf))];
        await toolSql.register(
          subjectId,
          { name: input.name, description: input.description ?? '', surfaces },
          clock(),
        );
      },
      async remove(input) {
        return toolSql.remove(await subjectOf(input.subject), input.name);
      },
      async list(options = {}) {
        return toolSql.list(await subjectOf(options.subject));
      },
      async toolsFor(surface, options = {}) {
        return toolSql.toolsFor(await subjectOf(options.subject), surfaceOf(surface));
      },
    },
    commitments: {
      async add(input) {
        const subjectId = await subjectOf(input.subject);
        const title = input.title.trim();
        if (title === '') throw new EngineError('EMPTY_TEXT', 'a commitment needs a title');
        if (input.due !== undefined && !isCalendarDate(input.due)) {
          throw new EngineError('INVALID_ARGUMENT', `due date "${input.due}": use YYYY-MM-DD`);
        }
        return commitments.add({
          id: newId(),
          subjectId,
          title,
          due: input.due ?? null,
          at: clock(),
        });
      },
      done: (id) => closeCommitment(id, 'done'),
      drop: (id) => closeCommitment(id, 'dropped'),
      async list(options = {}) {
        const status = options.status ?? null;
        if (status !== null && !(COMMITMENT_STATUSES as readonly string[]).includes(status)) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `status must be one of ${COMMITMENT_STATUSES.join(', ')}`,
          );
        }
        return commitments.list(
          await subjectOf(options.subject),
          status as CommitmentStatus | null,
          options.limit ?? 100,
        );
      },
    },
    actions: {
      async record(input) {
        const subjectId = await subjectOf(input.subject);
        const status = (input.status ?? 'confirmed') as ActionStatus;
        if (!ACTION_STATUSES.includes(status)) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `action status must be one of ${ACTION_STATUSES.join(', ')}`,
          );
        }
        for (const [what, v] of [
          ['tool', input.tool],
          ['target', input.target],
        ] as const) {
          if (v.trim() === '')
            throw new EngineError('INVALID_ARGUMENT', `an action needs a ${what}`);
        }
        const at = clock();
        return actionSql.record({
          id: newId(),
          subjectId,
          tool: input.tool.trim(),
          surface: surfaceOf(input.surface),
          target: input.target.trim(),
          status,
          completedAt: status === 'pending' ? null : (input.completedAt ?? at),
          at,
        });
      },
    },
    timeZone: {
      async set(input) {
        const subjectId = await subjectOf(input.subject);
        if (input.zone !== null && !(await sql.knowsZone(input.zone))) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `unknown time zone "${input.zone}" (use an IANA name, e.g. Europe/Stockholm)`,
          );
        }
        await sql.setTimeZone(subjectId, input.zone);
      },
      async get(options = {}) {
        return zoneOf(await subjectOf(options.subject));
      },
    },
  };
}
