import { createHash } from 'node:crypto';
import { EngineError } from '../domain/errors.js';
import { optionalBoolean, optionalString, optionalWhole, pageOf } from '../domain/input.js';
import { sessionNotFound } from '../domain/session.js';
import { requireId, type Turn } from '../domain/turn.js';
import type { ProposalGate } from '../gate/proposal-gate.js';
import type { TrustReader } from '../trust/trust-types.js';
import type { HistoryOptions } from '../history/history-types.js';
import type { ModuleDeps } from '../store/module-deps.js';
import { ReflectionSql, type ReflectionRow } from '../store/reflection-sql.js';
import { SessionSql } from '../store/session-sql.js';
import { SlotSql } from '../store/slot-sql.js';
import { UsageSql } from '../store/usage-sql.js';
import { llmFailed, type LlmClient } from './llm-client.js';
import {
  reflectionSchema,
  reflectionSlots,
  reflectionUserText,
  REFLECTION_SYSTEM,
  REFLECTION_TEMPLATE,
  REFLECTION_TOOL_DESCRIPTION,
  turnsToShow,
} from './reflection-prompt.js';
import type {
  ReflectionApi,
  ReflectionOutcome,
  ReflectionResult,
  ReflectionRun,
} from './reflection-types.js';

/** The prompt version every proposal of a run is counted under: a hash of the template. */
export const REFLECTION_PROMPT_VERSION = `reflect-${createHash('sha256')
  .update(REFLECTION_TEMPLATE)
  .digest('hex')
  .slice(0, 12)}`;

/** The most proposals one answer may hold; more is LLM_FAILED (a runaway, not a reflection). */
export const MAX_REFLECTION_PROPOSALS = 200;

export interface ReflectionModuleDeps extends ModuleDeps {
  gate: ProposalGate;
  trust: TrustReader;
  /** A session's turns, checked as `history.turns` checks them (SESSION_NOT_FOUND, bad ranges). */
  turns: (subjectId: string, sessionId: string, options: HistoryOptions) => Promise<Turn[]>;
  llm?: LlmClient;
}

export interface ReflectionModule {
  reflection(subjectId: string): ReflectionApi;
}

const DEFAULT_RUN_PAGE = 20;

function runOf(r: ReflectionRow): ReflectionRun {
  return {
    id: r.id,
    sessionId: r.sessionId,
    promptVersion: r.promptVersion,
    provider: r.provider,
    model: r.model,
    turns: { from: r.fromSeq, to: r.toSeq },
    proposed: r.proposed,
    dropped: r.dropped,
    usage: { inputTokens: r.inputTokens, outputTokens: r.outputTokens },
    durationMs: r.durationMs,
    createdAt: r.createdAt,
  };
}

/** LLM_NOT_CONFIGURED: what to set to give memledger a model. */
export function llmNotConfigured(): EngineError {
  return new EngineError(
    'LLM_NOT_CONFIGURED',
    'no model is configured: pass --llm-url and --llm-model (or set MEMLEDGER_LLM_URL and MEMLEDGER_LLM_MODEL; the key only in MEMLEDGER_LLM_API_KEY), or give the engine an `llm` client',
  );
}

/** memledger's own reflection, behind its own gate. */
export function createReflectionModule(deps: ReflectionModuleDeps): ReflectionModule {
  const { client, clock, newId } = deps;
  const sessions = new SessionSql(client);
  const slots = new SlotSql(client);
  const runs = new ReflectionSql(client);
  const inFlight = new Set<string>();

  return {
    reflection: (subjectId) => ({
      async reflect(input): Promise<ReflectionResult> {
        const sessionId = requireId(input.sessionId, 'session');
        const rehearse = optionalBoolean(input.rehearse, 'rehearse') === true;
        const range: HistoryOptions = {};
        const from = optionalWhole(input.from, 'from', 1);
        const to = optionalWhole(input.to, 'to', 1);
        if (from !== undefined) range.from = from;
        if (to !== undefined) range.to = to;
        if ((await sessions.ofSubject(subjectId, sessionId)) === null) {
          throw sessionNotFound(sessionId);
        }
        const llm = deps.llm;
        if (llm === undefined) throw llmNotConfigured();
        // a forgotten turn is a gap, not words to read
        const all = (await deps.turns(subjectId, sessionId, range)).filter(
          (t) => t.forgotten === undefined,
        );
        if (all.length === 0) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `session "${sessionId}" has no turns to reflect on`,
            {
              data: { field: 'sessionId' },
            },
          );
        }
        const fillable = reflectionSlots(await slots.list(subjectId));
        if (fillable.length === 0) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            'the subject declares no slot a reflection may fill (action slots are filled by receipts)',
          );
        }
        const shown = turnsToShow(all);
        const { live } = await deps.trust.view(subjectId);
        const user = reflectionUserText({
          sessionId,
          turnLines: shown.map((s) => s.line),
          slots: fillable,
          live,
        });
        // one reflection of a subject at a time: a second caller waits for nothing and pays nothing
        if (inFlight.has(subjectId)) {
          throw new EngineError(
            'REFLECTION_IN_PROGRESS',
            'a reflection of this subject is already running; try again when it ends',
          );
        }
        inFlight.add(subjectId);
        try {
          const started = Date.now();
          const answer = await llm.generate({
            name: 'propose_memories',
            description: REFLECTION_TOOL_DESCRIPTION,
            schema: reflectionSchema(fillable.map((s) => s.name)),
            system: REFLECTION_SYSTEM,
            user,
          });
          const durationMs = Date.now() - started;
          const proposals = answer.value.proposals;
          if (!Array.isArray(proposals)) {
            throw llmFailed(
              llm.provider,
              'not_an_object',
              'the answer does not match the schema: it has no "proposals" list',
            );
          }
          if (proposals.length > MAX_REFLECTION_PROPOSALS) {
            throw llmFailed(
              llm.provider,
              'not_an_object',
              `the answer holds ${proposals.length} proposals; a reflection proposes at most ${MAX_REFLECTION_PROPOSALS}`,
            );
          }
          const first = (shown[0] as { turn: Turn }).turn;
          const last = (shown[shown.length - 1] as { turn: Turn }).turn;
          const at = clock();
          const id = newId();
          let row: ReflectionRow | null = null;
          const result = await deps.gate.propose(
            {
              sessionId,
              subjectId,
              proposals,
              proposedBy: 'reflection',
              // only the slots and turns the model was shown; nothing goes live on a receipt
              scope: {
                slots: new Set(fillable.map((s) => s.name)),
                turns: { from: first.seq, to: last.seq },
              },
            },
            async (tx, outcomes) => {
              const dropped = outcomes.filter((o) => 'droppedId' in o).length;
              row = {
                id,
                sessionId,
                promptVersion: REFLECTION_PROMPT_VERSION,
                provider: llm.provider,
                model: answer.model,
                fromSeq: first.seq,
                toSeq: last.seq,
                proposed: outcomes.length,
                dropped,
                inputTokens: answer.usage.inputTokens,
                outputTokens: answer.usage.outputTokens,
                durationMs,
                createdAt: at,
              };
              await new ReflectionSql(tx).insert(subjectId, row, outcomes);
              // a utility generation: counted with its tokens, never a turn
              const counted = await new UsageSql(tx).countCall(
                subjectId,
                sessionId,
                'reflection',
                REFLECTION_SYSTEM.length + user.length,
                at,
                { input: answer.usage.inputTokens, output: answer.usage.outputTokens },
              );
              if (counted === null) throw sessionNotFound(sessionId);
            },
            { rehearse },
          );
          if (row === null) throw new EngineError('INTERNAL', 'the reflection was not recorded');
          return { ...result, reflection: runOf(row) };
        } finally {
          inFlight.delete(subjectId);
        }
      },

      async list(options = {}) {
        const session = optionalString(options.sessionId, 'sessionId') ?? null;
        return (await runs.list(subjectId, session, pageOf(options, DEFAULT_RUN_PAGE))).map(runOf);
      },

      async outcomes(options = {}) {
        const version = optionalString(options.promptVersion, 'promptVersion') ?? null;
        const [items, view] = await Promise.all([
          runs.items(subjectId, version),
          deps.trust.view(subjectId),
        ]);
        const liveIds = new Set<string>(view.live.map((f) => f.id));
        const byKey = new Map<string, ReflectionOutcome>();
        for (const item of items) {
          const key = `${item.promptVersion}\u0000${item.slot}`;
          let o = byKey.get(key);
          if (o === undefined) {
            o = {
              promptVersion: item.promptVersion,
              slot: item.slot,
              proposed: 0,
              dropped: {},
              reachedPile: 0,
              unattested: 0,
              pending: 0,
              live: 0,
              rejected: 0,
              other: 0,
            };
            byKey.set(key, o);
          }
          o.proposed++;
          if (item.code !== null) {
            o.dropped[item.code] = (o.dropped[item.code] ?? 0) + 1;
            continue;
          }
          o.reachedPile++;
          if (item.attested === false) o.unattested++;
          if (item.status === 'proposed') o.pending++;
          else if (item.status === 'rejected') o.rejected++;
          // live only when the owner's signatures back it, whatever the row says
          else if (item.factId !== null && liveIds.has(item.factId)) o.live++;
          else o.other++;
        }
        return [...byKey.values()];
      },
    }),
  };
}
