import type { FactId } from '../domain/ids.js';
import { EngineError } from '../domain/errors.js';
import { DEFAULT_FAILURE_CUES } from '../domain/gate-rules.js';
import { DEFAULT_SUBJECT } from '../domain/defaults.js';
import { SLOT_NAME, type SlotDeclaration } from '../domain/fact.js';
import { optionalBoolean, optionalString, pageOf } from '../domain/input.js';
import { sessionNotFound } from '../domain/session.js';
import {
  checkSummary,
  MAX_SUMMARY_SENTENCES,
  type PreviousSentence,
  type SummaryTurn,
} from '../domain/summary-check.js';
import { requireId, type Turn } from '../domain/turn.js';
import type { Trust } from '../trust/trust-types.js';
import type { HistoryOptions } from '../history/history-types.js';
import { lockChain } from '../store/decision-sql.js';
import { FactSql } from '../store/fact-sql.js';
import { RetractionSql } from '../store/retraction-sql.js';
import { transactionOf } from '../store/rolled-back.js';
import type { ModuleDeps } from '../store/module-deps.js';
import { SessionSql } from '../store/session-sql.js';
import { SlotSql } from '../store/slot-sql.js';
import { SummarySql, type StoredSummary, type SummaryRow } from '../store/summary-sql.js';
import { UsageSql } from '../store/usage-sql.js';
import { llmFailed, type LlmClient } from './llm-client.js';
import { llmNotConfigured } from './reflection-module.js';
import { MAX_SHOWN_TURN_CHARS, turnsToShow } from './reflection-prompt.js';
import {
  SUMMARY_PROMPT_VERSION,
  SUMMARY_SYSTEM,
  SUMMARY_TOOL_DESCRIPTION,
  summarySchema,
  summaryUserText,
} from './summary-prompt.js';
import type { SummariesApi, Summary } from './summary-types.js';

export interface SummaryModuleDeps extends ModuleDeps {
  trust: Trust;
  /** The gate's failure-to-recall cues (a summary records no failure to recall). */
  failureCues?: readonly string[];
  /** A session's turns, checked as `history.turns` checks them. */
  turns: (subjectId: string, sessionId: string, options: HistoryOptions) => Promise<Turn[]>;
  llm?: LlmClient;
}

export interface SummaryModule {
  summaries(subjectId: string): SummariesApi;
}

const DEFAULT_PAGE = 20;

/** Who stores a summary's fact (its `proposedBy`). */
export const SUMMARY_PROPOSER = 'summary';

/**
 * The sentences of a stored version that went into its fact: supported or kept, said in the
 * fact's text, and citing only turns the fact cites. The fact row is guarded and, once approved,
 * signed; a sentence row added beside it in the store is not part of the version.
 */
function versionSentences(s: StoredSummary): PreviousSentence[] {
  const text = s.factText;
  const cited = new Set((s.factCitations ?? []).map((c) => c.turn));
  if (text === null) return [];
  const rows = s.sentenceRows.filter((r) => r.verdict === 'supported' || r.verdict === 'kept');
  // the rows, in order, must be the fact's text exactly and cite only what the fact cites: a
  // row added or changed beside the fact makes the version unreadable, and nothing is folded
  const whole =
    rows.map((r) => r.text.trim()).join(' ') === text &&
    rows.every((r) => r.citations.length > 0 && r.citations.every((c) => cited.has(c.turn)));
  return whole ? rows.map((r) => ({ text: r.text, citations: r.citations })) : [];
}

function summaryOf(s: StoredSummary): Summary {
  return {
    id: s.id,
    aspect: s.aspect,
    sessionId: s.sessionId,
    previousId: s.previousId,
    factId: s.factId as FactId | null,
    factStatus: s.factStatus,
    // the fact's own text: what the owner is shown and signs
    text: s.factText ?? '',
    sentences: s.sentenceRows.map((r) => ({ ...r, citations: [...r.citations] })),
    changes: { kept: s.kept, added: s.added, leftOut: s.leftOut },
    promptVersion: s.promptVersion,
    provider: s.provider,
    model: s.model,
    usage: { inputTokens: s.inputTokens, outputTokens: s.outputTokens },
    createdAt: s.createdAt,
  };
}

/** Turns as the check reads them: cut where the prompt cuts them, so a kept sentence is held
 * to the same words as a new one. */
function cutTurns(turns: Map<string, SummaryTurn>): Map<string, SummaryTurn> {
  return new Map(
    [...turns].map(([id, t]) => [id, { ...t, content: t.content.slice(0, MAX_SHOWN_TURN_CHARS) }]),
  );
}

/** A summary aspect's fact key: one per aspect (rolling) or one per session. */
function keyOf(aspect: SlotDeclaration, sessionId: string): string {
  return aspect.scope === 'session' ? `session:${sessionId}` : 'rolling';
}

/**
 * SLOT_NOT_FOUND's message for an aspect no slot declares, with the command that declares it,
 * runnable as written: a name no slot may have gets no command, and a subject other than the
 * CLI's default is named with --subject.
 */
export function undeclaredAspect(subjectId: string, name: string): string {
  if (!SLOT_NAME.test(name)) {
    return `no summary aspect ${JSON.stringify(name.slice(0, 80))}: an aspect is a slot, named with a-z, 0-9 and _ (starting with a letter, 64 at most)`;
  }
  const subject = subjectId === DEFAULT_SUBJECT ? '' : ` --subject ${subjectId}`;
  return `no summary aspect "${name}": declare it first with rule summary (memledger slot declare --name ${name} --rule summary${subject})`;
}

/** memledger's living summaries, behind a sentence-by-sentence check and the owner. */
export function createSummaryModule(deps: SummaryModuleDeps): SummaryModule {
  const { client, clock, newId } = deps;
  const sessions = new SessionSql(client);
  const slots = new SlotSql(client);
  const store = new SummarySql(client);
  const inFlight = new Set<string>();

  const aspectOf = async (subjectId: string, name: unknown): Promise<SlotDeclaration> => {
    if (typeof name !== 'string' || name === '') {
      throw new EngineError('INVALID_ARGUMENT', 'aspect must be the name of a summary aspect', {
        data: { field: 'aspect' },
      });
    }
    const slot = (await slots.list(subjectId)).find((s) => s.name === name);
    if (slot === undefined || slot.rule !== 'summary') {
      throw new EngineError(
        'SLOT_NOT_FOUND',
        slot === undefined
          ? undeclaredAspect(subjectId, name)
          : `slot "${name}" is a ${slot.rule} slot, not a summary aspect`,
      );
    }
    return slot;
  };

  return {
    summaries: (subjectId) => ({
      async summarize(input): Promise<Summary> {
        const rehearse = optionalBoolean(input.rehearse, 'rehearse') === true;
        const aspect = await aspectOf(subjectId, input.aspect);
        let sessionId: string;
        if (input.sessionId === undefined) {
          const newest = (await sessions.list(subjectId, { limit: 1, offset: 0 }))[0];
          if (newest === undefined) {
            throw new EngineError('INVALID_ARGUMENT', 'the subject has no session to summarize', {
              data: { field: 'sessionId' },
            });
          }
          sessionId = newest.id;
        } else {
          sessionId = requireId(input.sessionId, 'session');
          if ((await sessions.ofSubject(subjectId, sessionId)) === null) {
            throw sessionNotFound(sessionId);
          }
        }
        const llm = deps.llm;
        if (llm === undefined) throw llmNotConfigured();
        // a forgotten turn is a gap, not words to read
        const all = (await deps.turns(subjectId, sessionId, {})).filter(
          (t) => t.forgotten === undefined,
        );
        if (all.length === 0) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `session "${sessionId}" has no turns to summarize`,
            { data: { field: 'sessionId' } },
          );
        }
        const shown = turnsToShow(all);
        if (!shown.some((s) => s.turn.role === 'user')) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            `session "${sessionId}" has no user turn to summarize: only the user's words support a summary`,
            { data: { field: 'sessionId' } },
          );
        }
        const scopeSession = aspect.scope === 'session' ? sessionId : null;
        const before = await store.previous(subjectId, aspect.name, scopeSession);
        const previous = before === null ? [] : versionSentences(before);
        const user = summaryUserText({
          sessionId,
          turnLines: shown.map((s) => s.line),
          aspect,
          previous,
        });
        const flight = `${subjectId}\u0000${aspect.name}\u0000${scopeSession ?? ''}`;
        if (inFlight.has(flight)) {
          throw new EngineError(
            'SUMMARY_IN_PROGRESS',
            `a summary of aspect "${aspect.name}" is already being written; try again when it ends`,
          );
        }
        inFlight.add(flight);
        try {
          const answer = await llm.generate({
            name: 'write_summary',
            description: SUMMARY_TOOL_DESCRIPTION,
            schema: summarySchema(),
            system: SUMMARY_SYSTEM,
            user,
          });
          const written = answer.value.sentences;
          if (!Array.isArray(written)) {
            throw llmFailed(
              llm.provider,
              'not_an_object',
              'the answer does not match the schema: it has no "sentences" list',
            );
          }
          if (written.length > MAX_SUMMARY_SENTENCES) {
            throw llmFailed(
              llm.provider,
              'not_an_object',
              `the answer holds ${written.length} sentences; a summary has at most ${MAX_SUMMARY_SENTENCES}`,
            );
          }
          const shownTurns = new Map<number, SummaryTurn>(
            shown.map(({ turn: t }) => [
              t.seq,
              {
                id: t.id,
                sessionId: t.sessionId,
                seq: t.seq,
                role: t.role,
                // what the model was shown: a turn is cut at MAX_SHOWN_TURN_CHARS in the prompt
                content: t.content.slice(0, MAX_SHOWN_TURN_CHARS),
                recordedAt: t.recordedAt,
              },
            ]),
          );
          const previousTurns = cutTurns(
            await store.turns(subjectId, [
              ...new Set(previous.flatMap((p) => p.citations.map((c) => c.turn))),
            ]),
          );
          const at = clock();
          // a rehearsal writes as a run does, in a transaction that is rolled back
          const transaction = transactionOf(client, rehearse);
          const outcome = await deps.trust.withSubject(subjectId, () =>
            transaction(async (tx) => {
              // the same lock the gate and the owner's decisions take: no decision interleaves
              await lockChain(tx, subjectId);
              // a utility generation: counted with its tokens, never a turn, whatever follows
              const counted = await new UsageSql(tx).countCall(
                subjectId,
                sessionId,
                'summary',
                SUMMARY_SYSTEM.length + user.length,
                at,
                { input: answer.usage.inputTokens, output: answer.usage.outputTokens },
              );
              if (counted === null) throw sessionNotFound(sessionId);
              // another process stored a version while the model wrote this one: it folded an
              // old version, so it is not stored (the lineage never forks)
              const now = await new SummarySql(tx).previous(subjectId, aspect.name, scopeSession);
              if ((now?.id ?? null) !== (before?.id ?? null)) return null;
              // checked under the lock: a retraction recorded during the call counts
              const check = checkSummary({
                sentences: written,
                shown: shownTurns,
                previous,
                previousTurns,
                retracted: await new RetractionSql(tx).standingClaims(subjectId),
                failureCues: deps.failureCues ?? DEFAULT_FAILURE_CUES,
              });
              const row: SummaryRow = {
                id: newId(),
                aspect: aspect.name,
                sessionId,
                previousId: before?.id ?? null,
                factId: null,
                sentences: check.sentences.length,
                supported: check.sentences.filter(
                  (s) => s.verdict === 'supported' || s.verdict === 'kept',
                ).length,
                kept: check.kept,
                added: check.added,
                leftOut: check.leftOut,
                promptVersion: SUMMARY_PROMPT_VERSION,
                provider: llm.provider,
                model: answer.model,
                inputTokens: answer.usage.inputTokens,
                outputTokens: answer.usage.outputTokens,
                createdAt: at,
              };
              const first = check.citations[0];
              if (first !== undefined) {
                const fact = await new FactSql(tx).insert({
                  id: newId(),
                  subjectId,
                  slot: aspect.name,
                  key: keyOf(aspect, sessionId),
                  text: check.text,
                  origin: 'summarized',
                  status: 'proposed',
                  attested: true,
                  evidence: {
                    turnId: first.turn,
                    sessionId: first.session,
                    seq: first.seq,
                    quote: null,
                    tool: null,
                    citations: check.citations,
                  },
                  proposedBy: SUMMARY_PROPOSER,
                  validFrom: null,
                  validTo: null,
                  at,
                });
                row.factId = fact.id;
              }
              await new SummarySql(tx).insert(subjectId, row, check.sentences);
              return { row, check };
            }),
          );
          if (outcome === null) {
            throw new EngineError(
              'SUMMARY_IN_PROGRESS',
              `the versions of aspect "${aspect.name}" changed while this summary was written (another was stored, or the owner decided on the one it folds); nothing was stored but the call's usage; run it again`,
            );
          }
          const { row, check } = outcome;
          return summaryOf({
            ...row,
            factStatus: row.factId === null ? null : 'proposed',
            factText: row.factId === null ? null : check.text,
            factCitations: row.factId === null ? null : check.citations,
            sentenceRows: check.sentences,
          });
        } finally {
          inFlight.delete(flight);
        }
      },

      async list(options = {}) {
        const aspect = optionalString(options.aspect, 'aspect') ?? null;
        return (await store.list(subjectId, aspect, pageOf(options, DEFAULT_PAGE))).map(summaryOf);
      },
    }),
  };
}
