import { z } from 'zod';
import {
  ACTION_STATUSES,
  CAUGHT_BY,
  COMMITMENT_STATUSES,
  COMPARE_OPS,
  FILE_PROBE_MODES,
  PROBE_VERDICTS,
  type Commitment,
  type ProbeRecord,
  type Retraction,
  type FactId,
} from '../../src/index.js';
import { shownInline } from '../../src/rules.js';
import { defineTool, iso, type McpToolAdapter } from './mcp-tool.js';
import {
  LIMITS,
  commitmentSchema,
  compact,
  freeText,
  idText,
  isoDate,
  positiveInt,
  text,
} from './mcp-schemas.js';

const probeSpecInput = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('file'),
    path: freeText,
    mode: z.enum(FILE_PROBE_MODES),
    needle: freeText.optional(),
    negate: z.boolean().optional(),
  }),
  z.strictObject({
    kind: z.literal('sql'),
    query: freeText,
    op: z.enum(COMPARE_OPS),
    expect: z.number(),
  }),
  z.strictObject({
    kind: z.literal('http'),
    url: text(LIMITS.tool),
    status: z.int().min(100).max(599).optional(),
    contains: freeText.optional(),
  }),
]);

const retractionSchema = z.object({
  id: z.string(),
  claim: z.string(),
  claimedAt: z.string().nullable(),
  claimSurface: z.string().nullable(),
  claimRef: z.string().nullable(),
  stoodOn: z.string(),
  whyWrong: z.string(),
  correctedClaim: z.string(),
  correctedAt: z.string(),
  caughtBy: z.string(),
  tags: z.array(z.string()),
  procedure: z.string(),
  passObservation: z.string(),
  overturnCondition: z.string(),
  probe: z.object({ spec: z.unknown(), standsIf: z.string(), overturnsIf: z.string() }).nullable(),
  dueAt: z.string(),
  factId: z.string().nullable(),
  verdict: z.string(),
  recordedAt: z.string(),
});

function retractionJson(r: Retraction): z.input<typeof retractionSchema> {
  return {
    id: r.id,
    claim: r.claim,
    claimedAt: iso(r.claimedAt),
    claimSurface: r.claimSurface,
    claimRef: r.claimRef,
    stoodOn: r.stoodOn,
    whyWrong: r.whyWrong,
    correctedClaim: r.correctedClaim,
    correctedAt: iso(r.correctedAt),
    caughtBy: r.caughtBy,
    tags: r.tags,
    procedure: r.procedure,
    passObservation: r.passObservation,
    overturnCondition: r.overturnCondition,
    probe: r.probe,
    dueAt: iso(r.dueAt),
    factId: r.factId,
    verdict: r.verdict,
    recordedAt: iso(r.recordedAt),
  };
}

const retractClaim = defineTool({
  name: 'retract_claim',
  title: 'Retract a claim',
  description:
    'Records a disproven claim in the retraction ledger: what it stood on, why it was wrong, what replaces it, and a typed falsifier (how to check, the observation that keeps the retraction standing, and a different one that would overturn it). Retracted claims stay retracted in recall, arrival and the gate. A remembered fact it names stays live, marked disputed, until reviewed: no tool takes one out of memory.',
  input: z.strictObject({
    claim: freeText,
    stoodOn: freeText,
    whyWrong: freeText,
    corrected: freeText.describe('what replaces the claim'),
    procedure: freeText.describe('how to check'),
    passObservation: freeText.describe('what keeps the retraction standing'),
    overturnCondition: freeText.describe('what would overturn it (must differ)'),
    caughtBy: z.enum(CAUGHT_BY).optional(),
    claimedAt: isoDate.optional(),
    claimSurface: freeText.optional(),
    claimRef: freeText.optional(),
    tags: z.array(freeText).max(1000).optional(),
    dueDays: z.int().min(0).max(36_500).optional(),
    factId: idText
      .optional()
      .describe(
        'a live fact this retraction disputes: a remembered fact stays live, marked disputed, until reviewed',
      ),
    probe: z
      .strictObject({
        spec: probeSpecInput,
        standsIf: z.enum(PROBE_VERDICTS),
        overturnsIf: z.enum(PROBE_VERDICTS),
      })
      .optional(),
  }),
  output: z.object({ retraction: retractionSchema }),
  async run(me, input) {
    const { claimedAt, probe, factId, ...rest } = input;
    const r = await me.ledger.retract({
      ...compact(rest),
      ...(factId === undefined ? {} : { factId: factId as FactId }),
      ...(claimedAt === undefined ? {} : { claimedAt: new Date(claimedAt) }),
      ...(probe === undefined ? {} : { probe: { ...probe, spec: compact(probe.spec) } }),
    });
    const disputed =
      r.factId !== null && (await me.facts.get(r.factId)).status === 'active'
        ? ` Fact ${r.factId} stays in live memory, marked disputed by ${r.id}, until the owner signs the retraction: no tool can take a fact the owner approved out of memory.`
        : '';
    return {
      structured: { retraction: retractionJson(r) },
      text: `Retracted "${shownInline(r.claim)}" (${r.id}); now: "${shownInline(r.correctedClaim)}". Falsifier due ${iso(r.dueAt)}.${disputed}`,
    };
  },
});

const probeRecordSchema = z.object({
  id: z.string(),
  instrument: z.string(),
  spec: z.unknown(),
  verdict: z.enum(PROBE_VERDICTS),
  errorCode: z.string().nullable(),
  evidence: z.record(z.string(), z.unknown()),
  calibrated: z.boolean(),
  calibrationId: z.string().nullable(),
  purpose: z.string().nullable(),
  ranAt: z.string(),
});

function probeJson(r: ProbeRecord): z.input<typeof probeRecordSchema> {
  return {
    id: r.id,
    instrument: r.instrument,
    spec: r.spec,
    verdict: r.verdict,
    errorCode: r.errorCode,
    evidence: r.evidence,
    calibrated: r.calibrated,
    calibrationId: r.calibrationId,
    purpose: r.purpose,
    ranAt: iso(r.ranAt),
  };
}

const runProbe = defineTool({
  name: 'run_probe',
  title: 'Run a probe',
  description:
    'Runs a structured probe (file exists/missing/contains, one read-only SQL number, or an HTTP GET on an allowed host) outside the model’s context and records it. The verdict comes from the spec’s polarity, never from wording; an instrument is trusted only once its positive and negative controls diverged (calibrated).',
  input: z.strictObject({ spec: probeSpecInput, purpose: freeText.optional() }),
  output: z.object({ record: probeRecordSchema }),
  async run(me, input) {
    const r = await me.probes.run(
      compact(input.spec),
      input.purpose === undefined ? {} : { purpose: input.purpose },
    );
    const trust = r.calibrated
      ? 'calibrated'
      : 'NOT calibrated: do not rely on this verdict until its controls diverge';
    return {
      structured: { record: probeJson(r) },
      text: `Probe ${r.id}: ${r.verdict}${r.errorCode === null ? '' : ` (${shownInline(r.errorCode)})`}; instrument ${shownInline(r.instrument)}, ${trust}.`,
    };
  },
});

function commitmentJson(c: Commitment): z.input<typeof commitmentSchema> {
  return {
    id: c.id,
    title: c.title,
    due: c.due,
    status: c.status,
    createdAt: iso(c.createdAt),
    statusAt: iso(c.statusAt),
  };
}

const commitmentLine = (c: Commitment) =>
  `${shownInline(c.id)} [${c.status}] ${shownInline(c.title)}${c.due === null ? '' : ` (due ${shownInline(c.due)})`}`;

const listCommitments = defineTool({
  name: 'list_commitments',
  title: 'List commitments',
  description:
    'What was promised to this subject, newest first; open ones unless a status is given.',
  readOnly: true,
  input: z.strictObject({
    status: z.enum(COMMITMENT_STATUSES).optional().describe('default open'),
    limit: positiveInt(1000).optional(),
  }),
  output: z.object({ commitments: z.array(commitmentSchema), count: z.int() }),
  async run(me, input) {
    const status = input.status ?? 'open';
    const list = await me.commitments.list({
      status,
      ...(input.limit === undefined ? {} : { limit: input.limit }),
    });
    return {
      structured: { commitments: list.map(commitmentJson), count: list.length },
      text:
        list.length === 0
          ? `No ${status} commitments.`
          : [`${list.length} ${status}:`, ...list.map(commitmentLine)].join('\n'),
    };
  },
});

const addCommitment = defineTool({
  name: 'add_commitment',
  title: 'Add a commitment',
  description: 'Records something promised to this subject, open until done or dropped.',
  input: z.strictObject({
    title: freeText,
    due: z.iso.date().optional().describe('YYYY-MM-DD'),
  }),
  output: z.object({ commitment: commitmentSchema }),
  async run(me, input) {
    const c = await me.commitments.add(compact(input));
    return { structured: { commitment: commitmentJson(c) }, text: `Added ${commitmentLine(c)}.` };
  },
});

const completeCommitment = defineTool({
  name: 'complete_commitment',
  title: 'Complete a commitment',
  description: 'Marks an open commitment done.',
  input: z.strictObject({ commitmentId: idText }),
  output: z.object({ commitment: commitmentSchema }),
  async run(me, input) {
    const c = await me.commitments.done(input.commitmentId);
    return { structured: { commitment: commitmentJson(c) }, text: `Done: ${commitmentLine(c)}.` };
  },
});

const actionSchema = z.object({
  id: z.string(),
  tool: z.string(),
  surface: z.string(),
  target: z.string(),
  status: z.enum(ACTION_STATUSES),
  completedAt: z.string().nullable(),
  recordedAt: z.string(),
});

const recordAction = defineTool({
  name: 'record_action',
  title: 'Record an action',
  description:
    'Records an action taken through a tool (tool, surface, what it touched). Confirmed actions of the last 48 hours show on arrival.',
  input: z.strictObject({
    tool: text(LIMITS.tool),
    surface: text(64),
    target: freeText.describe('what the action touched, briefly'),
    status: z.enum(ACTION_STATUSES).optional().describe('default confirmed'),
    completedAt: isoDate.optional(),
  }),
  output: z.object({ action: actionSchema }),
  async run(me, input) {
    const { completedAt, ...rest } = input;
    const a = await me.actions.record({
      ...compact(rest),
      ...(completedAt === undefined ? {} : { completedAt: new Date(completedAt) }),
    });
    return {
      structured: {
        action: {
          id: a.id,
          tool: a.tool,
          surface: a.surface,
          target: a.target,
          status: a.status,
          completedAt: iso(a.completedAt),
          recordedAt: iso(a.recordedAt),
        },
      },
      text: `Recorded ${a.status} action ${shownInline(a.tool)} on ${shownInline(a.surface)} → ${shownInline(a.target)}.`,
    };
  },
});

/** The ledger, probes, commitments and actions. */
export const GROUND_TOOLS: readonly McpToolAdapter[] = [
  retractClaim,
  runProbe,
  listCommitments,
  addCommitment,
  completeCommitment,
  recordAction,
];
