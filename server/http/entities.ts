import { z } from '@hono/zod-openapi';
import {
  ACTION_STATUSES,
  CAUGHT_BY,
  COMMITMENT_STATUSES,
  ATTESTATION_VERDICTS,
  DROP_CODES,
  FACT_ORIGINS,
  FACT_STATUSES,
  FORGET_REQUEST_STATUSES,
  FORGET_SCOPES,
  PROBE_VERDICTS,
  RECALL_KINDS,
  RETRACTION_VERDICTS,
  SENTENCE_VERDICTS,
  SLOT_RULES,
  SUMMARY_SCOPES,
  TIERS,
  TURN_ROLES,
  UTILITY_KINDS,
} from '../../src/index.js';
import { DateTime } from './schemas.js';
import { ProbeSpecOut } from './probe-spec.js';

/**
 * Output schemas: what each route answers, as the OpenAPI document describes it. Handlers pass
 * every answer through its schema (`send`), so a field the document does not name never leaves,
 * and a field it names wrongly fails loudly as INTERNAL in the tests rather than silently.
 * No output names a subject: the token's subject is the only one a caller ever sees.
 */

export const Session = z
  .object({
    id: z.string(),
    title: z.string().nullable(),
    turnCount: z.number().int(),
    createdAt: DateTime,
  })
  .openapi('Session');

export const Receipt = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('tools'),
      tools: z.array(z.string()),
      sources: z.array(z.string()),
    }),
    z.object({ kind: z.literal('none') }),
    z.object({ kind: z.literal('unknown') }),
  ])
  .openapi('Receipt', {
    description: 'What tools ran on an assistant turn and what they returned; none; or unknown.',
  });

export const Turn = z
  .object({
    id: z.string(),
    sessionId: z.string(),
    seq: z.number().int(),
    role: z.enum(TURN_ROLES),
    content: z.string(),
    corrective: z.boolean(),
    receipt: Receipt.nullable(),
    recordedAt: DateTime,
    speaker: z.string().nullable(),
  })
  .openapi('Turn');

export const AddTurnResult = z
  .discriminatedUnion('recorded', [
    z.object({ recorded: z.literal(true), turn: Turn, strippedReceipts: z.number().int() }),
    z.object({
      recorded: z.literal(false),
      utility: z.enum(UTILITY_KINDS),
      requests: z.number().int(),
    }),
  ])
  .openapi('AddTurnResult', {
    description: 'The recorded turn, or a utility generation counted (never recorded).',
  });

export const UtilityUsage = z
  .object({
    kind: z.enum(UTILITY_KINDS),
    requests: z.number().int(),
    chars: z.number().int(),
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    firstAt: DateTime,
    lastAt: DateTime,
  })
  .openapi('UtilityUsage');

export const HistoryMessage = z
  .object({ role: z.enum(TURN_ROLES), content: z.string() })
  .openapi('HistoryMessage');

export const Citation = z
  .object({ turn: z.string(), session: z.string(), seq: z.number().int(), at: z.string() })
  .openapi('Citation', {
    description: 'One turn a summary rests on: its id, session, seq and time.',
  });

/** The gate's verdict on a proposal's quote, and why (docs/ATTESTATION.md). */
export const Attestation = z
  .object({
    verdict: z.enum(ATTESTATION_VERDICTS),
    reason: z.string(),
  })
  .openapi('Attestation', {
    description:
      'what the quoted sentence does with the claim; only `asserted` counts as attested. Null for actions (their receipt attests them), summaries and facts stored before typed attestation.',
  });

export const Fact = z
  .object({
    id: z.string(),
    slot: z.string(),
    key: z.string().nullable(),
    text: z.string(),
    origin: z.enum(FACT_ORIGINS),
    status: z.enum(FACT_STATUSES),
    attested: z.boolean(),
    attestation: Attestation.nullable().optional(),
    evidence: z.object({
      turnId: z.string().nullable(),
      sessionId: z.string().nullable(),
      seq: z.number().int().nullable(),
      quote: z.string().nullable(),
      tool: z.string().nullable(),
      citations: z.array(Citation).nullable().optional().openapi({
        description: 'a summarized fact’s cited turns, signed with it; null for other facts',
      }),
    }),
    supersedesId: z.string().nullable(),
    supersededById: z.string().nullable(),
    validFrom: DateTime.nullable(),
    validTo: DateTime.nullable(),
    recordedAt: DateTime,
    supersededAt: DateTime.nullable(),
    statusAt: DateTime,
    proposedBy: z.string(),
    retractionId: z.string().nullable(),
    restoredFromId: z.string().nullable(),
    integrity: z.object({ code: z.string(), reason: z.string() }).optional(),
  })
  .openapi('Fact', { description: 'A fact with its passport: origin, evidence, status, dates.' });

export const PendingProposal = z
  .object({
    fact: Fact,
    citedTurn: Turn.nullable(),
    verdictNow: Attestation.nullable().optional().openapi({
      description:
        'the gate’s verdict on the stored claim and quote, read again now; when it differs from fact.attestation, the stored verdict was not the gate’s (or older rules gave it)',
    }),
  })
  .openapi('PendingProposal');

export const ProposeResult = z
  .object({
    proposed: z.array(
      z.object({
        id: z.string(),
        slot: z.string(),
        text: z.string(),
        attested: z.boolean(),
        attestation: Attestation.nullable(),
        status: z.enum(FACT_STATUSES),
      }),
    ),
    dropped: z.array(
      z.object({
        slot: z.string(),
        text: z.string(),
        code: z.enum(DROP_CODES),
        reason: z.string(),
      }),
    ),
  })
  .openapi('ProposeResult');

const FieldDigest = z.object({
  length: z.number().int(),
  sha256: z.string().nullable(),
  unencodable: z.string().optional(),
});

export const DroppedProposal = z
  .object({
    id: z.string(),
    sessionId: z.string().nullable(),
    slot: z.string(),
    text: z.string(),
    proposal: z.unknown(),
    code: z.string(),
    reason: z.string(),
    proposedBy: z.string(),
    droppedAt: DateTime,
    digest: z
      .object({
        truncated: z.boolean(),
        slot: FieldDigest,
        text: FieldDigest,
        proposal: FieldDigest,
      })
      .nullable(),
  })
  .openapi('DroppedProposal');

export const IntegrityReport = z
  .object({
    ok: z.boolean(),
    chain: z.object({
      verified: z.number().int(),
      stored: z.number().int(),
      headHash: z.string(),
      broken: z
        .object({ brokenAt: z.number().int(), code: z.string(), reason: z.string() })
        .nullable(),
      headCut: z
        .object({
          source: z.enum(['process', 'arrival', 'owner']),
          expected: z.object({ seq: z.number().int(), hash: z.string() }),
          found: z.number().int(),
          reason: z.string(),
        })
        .nullable(),
      anchor: z.string().nullable().openapi({
        description:
          "what the store's owner key was checked against (the owner's key file); null: nothing from outside the store",
      }),
      unanchored: z.boolean().openapi({
        description:
          "the store holds an owner key and the server holds no anchor: it trusted the store's own copy",
      }),
    }),
    withheld: z.array(z.object({ factId: z.string(), code: z.string(), reason: z.string() })),
    unexplained: z.array(
      z.object({ factId: z.string(), status: z.string(), code: z.string(), reason: z.string() }),
    ),
    delegations: z.array(
      z.object({
        slot: z.string(),
        seq: z.number().int().nullable(),
        code: z.string(),
        reason: z.string(),
      }),
    ),
    warning: z.array(z.string()),
  })
  .openapi('IntegrityReport');

/** What a page of live memory says of the rest: the integrity report's verdict and its words. */
export const LiveIntegrity = IntegrityReport.pick({ ok: true, warning: true }).openapi({
  description:
    "ok false: part of the stored memory failed verification and is withheld; warning says what and why (the arrival integrity block's lines)",
});

export const Slot = z
  .object({
    name: z.string(),
    rule: z.enum(SLOT_RULES),
    autoLive: z.boolean(),
    tools: z.array(z.string()).optional(),
    scope: z.enum(SUMMARY_SCOPES).optional().openapi({ description: 'summary aspects only' }),
  })
  .openapi('Slot');

export const Retraction = z
  .object({
    id: z.string(),
    claim: z.string(),
    claimedAt: DateTime.nullable(),
    claimSurface: z.string().nullable(),
    claimRef: z.string().nullable(),
    stoodOn: z.string(),
    whyWrong: z.string(),
    correctedClaim: z.string(),
    correctedAt: DateTime,
    caughtBy: z.enum(CAUGHT_BY),
    tags: z.array(z.string()),
    procedure: z.string(),
    passObservation: z.string(),
    overturnCondition: z.string(),
    probe: z
      .object({ spec: z.unknown(), standsIf: z.string(), overturnsIf: z.string() })
      .nullable(),
    dueAt: DateTime,
    factId: z.string().nullable(),
    verdict: z.enum(RETRACTION_VERDICTS),
    settledAt: DateTime.nullable(),
    settledOutcome: z.string().nullable(),
    settledBy: z.string().nullable(),
    settledProbeRecordId: z.string().nullable(),
    restoredFactId: z.string().nullable(),
    recordedAt: DateTime,
  })
  .openapi('Retraction');

export const ProbeRecord = z
  .object({
    id: z.string(),
    instrument: z.string(),
    spec: ProbeSpecOut,
    verdict: z.enum(PROBE_VERDICTS),
    errorCode: z.string().nullable(),
    evidence: z.record(z.string(), z.unknown()),
    calibrated: z.boolean(),
    calibrationId: z.string().nullable(),
    purpose: z.string().nullable(),
    ranAt: DateTime,
  })
  .openapi('ProbeRecord');

export const CalibrationSummary = z
  .object({
    instrument: z.string(),
    passed: z.boolean(),
    positive: z.enum(PROBE_VERDICTS),
    negative: z.enum(PROBE_VERDICTS),
    calibrationId: z.string(),
    problem: z.string().optional(),
  })
  .openapi('CalibrationSummary');

export const Arrival = z
  .object({
    manifestId: z.string(),
    sessionId: z.string().nullable(),
    surface: z.string(),
    blocks: z.array(
      z.object({
        name: z.string(),
        tier: z.enum(TIERS),
        text: z.string(),
        sha256: z.string(),
        degraded: z.boolean(),
        /** Why a fallback stood in: `timeout` or `failed` (the block's own error stays in the server). */
        reason: z.enum(['timeout', 'failed']).nullable(),
      }),
    ),
    tools: z.array(z.string()),
    text: z.string(),
    /** Every live fact and recalled turn the text shows, with its line and passport. */
    memories: z.array(
      z.object({
        block: z.string(),
        kind: z.enum(['fact', 'turn']),
        id: z.string(),
        line: z.string(),
        passport: z.object({
          origin: z.enum(['turn', ...FACT_ORIGINS]),
          date: z.string(),
          sessionId: z.string().nullable(),
          turn: z.number().int().nullable(),
          slot: z.string().optional(),
          role: z.string().optional(),
          quote: z.string().nullable().optional(),
          tool: z.string().nullable().optional(),
        }),
      }),
    ),
  })
  .openapi('Arrival');

export const ManifestDiff = z
  .object({
    from: z.string().nullable(),
    to: z.string(),
    surface: z.string(),
    blocks: z.object({
      added: z.array(z.string()),
      removed: z.array(z.string()),
      changed: z.array(z.string()),
    }),
    tools: z.object({
      added: z.array(z.string()),
      removed: z.array(z.string()),
      countBefore: z.number().int().nullable(),
      countAfter: z.number().int(),
    }),
  })
  .openapi('ManifestDiff');

export const Commitment = z
  .object({
    id: z.string(),
    title: z.string(),
    due: z.string().nullable(),
    status: z.enum(COMMITMENT_STATUSES),
    createdAt: DateTime,
    statusAt: DateTime,
  })
  .openapi('Commitment');

export const ActionRecord = z
  .object({
    id: z.string(),
    tool: z.string(),
    surface: z.string(),
    target: z.string(),
    status: z.enum(ACTION_STATUSES),
    completedAt: DateTime.nullable(),
    recordedAt: DateTime,
  })
  .openapi('ActionRecord');

/** What a forget request names: one of the scopes (a phrase at least 3 characters). */
export const ForgetScope = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('turn'),
      session: z.string().min(1).max(200),
      seq: z.int().min(1),
    }),
    z.strictObject({ kind: z.literal('session'), session: z.string().min(1).max(200) }),
    z.strictObject({ kind: z.literal('fact'), fact: z.string().min(1).max(200) }),
    z.strictObject({ kind: z.literal('phrase'), phrase: z.string().min(3).max(2000) }),
    z.strictObject({ kind: z.literal('subject') }),
  ])
  .openapi('ForgetScope');

export const ForgetRequest = z
  .object({
    id: z.string(),
    sessionId: z.string(),
    turn: z.number().int(),
    quote: z.string(),
    scope: z.object({ kind: z.enum(FORGET_SCOPES) }).loose(),
    requestedBy: z.string(),
    recordedAt: DateTime,
    status: z.enum(FORGET_REQUEST_STATUSES),
    decidedAt: DateTime.nullable(),
    forgetId: z.string().nullable(),
  })
  .openapi('ForgetRequest');

export const RegisteredTool = z
  .object({
    name: z.string(),
    description: z.string(),
    surfaces: z.array(z.string()),
    registeredAt: DateTime,
  })
  .openapi('RegisteredTool');

export const RecallItem = z
  .object({
    kind: z.enum(RECALL_KINDS),
    id: z.string(),
    text: z.string(),
    score: z.number(),
    passport: z.object({
      origin: z.enum(['turn', ...FACT_ORIGINS]),
      primary: z.boolean(),
      status: z.enum(['recorded', ...FACT_STATUSES]),
      date: z.string(),
      sessionId: z.string().nullable(),
      turn: z.number().int().nullable(),
      role: z.enum(TURN_ROLES).optional(),
      speaker: z.string().nullable().optional(),
      receipt: Receipt.nullable().optional(),
      slot: z.string().optional(),
      key: z.string().nullable().optional(),
      attested: z.boolean().optional(),
      evidence: z
        .object({
          turnId: z.string().nullable(),
          quote: z.string().nullable(),
          tool: z.string().nullable(),
        })
        .optional(),
      validFrom: z.string().nullable().optional(),
      validTo: z.string().nullable().optional(),
    }),
  })
  .openapi('RecallItem');

export const ReflectionRun = z
  .object({
    id: z.string(),
    sessionId: z.string(),
    promptVersion: z.string(),
    provider: z.string(),
    model: z.string(),
    turns: z.object({ from: z.number().int(), to: z.number().int() }),
    proposed: z.number().int(),
    dropped: z.number().int(),
    usage: z.object({ inputTokens: z.number().int(), outputTokens: z.number().int() }),
    durationMs: z.number().int(),
    createdAt: DateTime,
  })
  .openapi('ReflectionRun', {
    description:
      'One reflection: the prompt version and model, the turns shown, how many proposals the answer held and how many the gate dropped.',
  });

export const ReflectResult = z
  .object({
    reflection: ReflectionRun,
    proposed: ProposeResult.shape.proposed,
    dropped: ProposeResult.shape.dropped,
  })
  .openapi('ReflectResult', {
    description:
      'The run, and the gate’s verdict on each proposal: pending in the pile, or dropped with its code.',
  });

export const ReflectionOutcome = z
  .object({
    promptVersion: z.string(),
    slot: z.string(),
    proposed: z.number().int(),
    dropped: z.record(z.string(), z.number().int()),
    reachedPile: z.number().int(),
    unattested: z.number().int(),
    pending: z.number().int(),
    live: z.number().int(),
    rejected: z.number().int(),
    other: z.number().int(),
  })
  .openapi('ReflectionOutcome', {
    description:
      'What one prompt version’s proposals to one slot became: dropped per code, reached the pile, and where those stand now (live only when owner signatures back it).',
  });

export const Summary = z
  .object({
    id: z.string(),
    aspect: z.string(),
    sessionId: z.string(),
    previousId: z.string().nullable(),
    factId: z.string().nullable(),
    factStatus: z.string().nullable(),
    text: z.string(),
    sentences: z.array(
      z.object({
        position: z.number().int(),
        text: z.string(),
        citations: z.array(Citation),
        verdict: z.enum(SENTENCE_VERDICTS),
        reason: z.string(),
      }),
    ),
    changes: z.object({
      kept: z.number().int(),
      added: z.number().int(),
      leftOut: z.number().int(),
    }),
    promptVersion: z.string(),
    provider: z.string(),
    model: z.string(),
    usage: z.object({ inputTokens: z.number().int(), outputTokens: z.number().int() }),
    createdAt: DateTime,
  })
  .openapi('Summary', {
    description:
      'One summary: every sentence with the turns it cites and its verdict, the supported ones as one summarized fact in the pile (factId), what changed from the version it folds.',
  });
