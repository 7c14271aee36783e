import type { FactId, Proposal } from '../../src/index.js';
import { DECISIONS } from '../../src/domain/decision-chain.js';
import { EngineError } from '../../src/domain/errors.js';
import { storedVerdictDiffers } from '../../src/domain/fact-render.js';
import { parseChoice } from '../../src/domain/vocabulary.js';
import { shownInline } from '../../src/domain/shown-text.js';
import { defineCommand } from '../command.js';
import { factToJson, verdictLine } from '../fact-json.js';
import type { CliIo } from '../io.js';
import { SESSION_OPTION, SUBJECT_OPTION } from '../options.js';
import { recordSignedHead } from '../head-file.js';
import { KEY_OPTIONS, ownerSigner } from '../owner-key-options.js';

async function readJsonArray(io: CliIo, file: string): Promise<unknown[]> {
  let raw: string;
  try {
    raw = await io.readFile(file);
  } catch (err) {
    throw new EngineError('INVALID_ARGUMENT', `cannot read ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new EngineError('INVALID_ARGUMENT', `${file} is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed))
    throw new EngineError('INVALID_ARGUMENT', `${file} must hold a JSON array of proposals`);
  return parsed as unknown[];
}

/**
 * `propose` when the file held proposals and the gate dropped every one: nothing reached the
 * pile, which a script must not read as success. The output (stdout) still says why each dropped.
 */
export const EXIT_ALL_DROPPED = 5;

/** `propose`: puts proposals through the write gate; what passes waits in the pile. */
export const proposeCommand = defineCommand({
  path: ['propose'],
  summary: 'Puts proposed memories through the write gate: each passes to the pile or is dropped.',
  notes: [
    'The file is a JSON array of proposals, each citing a turn of the session by its number:',
    '  [{ "slot": "what_i_know_about_user", "text": "The user flies to Lisbon on Friday.",',
    '     "origin": "saw", "evidence": { "turn": 1, "quote": "I fly to Lisbon on Friday" } }]',
    'slot: a declared slot (memledger slots); origin: saw, inferred, did or summarized; a user',
    "fact or correction quotes the user's own words from that user turn (evidence.quote); an",
    'action cites a tool its receipt shows ran (evidence.tool); "key" names a value a later one',
    'replaces; "validFrom"/"validTo": ISO dates the fact holds in the world. docs/API.md, gate.',
    `Exits ${EXIT_ALL_DROPPED} when the file held proposals and the gate dropped every one.`,
  ],
  options: {
    ...SESSION_OPTION,
    ...SUBJECT_OPTION,
    file: {
      kind: 'text',
      value: 'proposals.json',
      required: true,
      help: 'a JSON array of proposals, each citing a turn of the session',
    },
    by: { kind: 'text', value: 'WHO', help: 'who proposes (e.g. reflection)' },
  },
  async run(ctx) {
    const { session: sessionId, by } = ctx.values;
    const proposals = await readJsonArray(ctx.io, ctx.values.file);
    const result = await ctx.withSubject(ctx.values.subject, (me) =>
      // the file's items as written: the gate judges each and drops what is not a proposal
      me.gate.propose({
        sessionId,
        proposals: proposals as readonly Proposal[],
        ...(by === undefined ? {} : { proposedBy: by }),
      }),
    );
    if (proposals.length > 0 && result.proposed.length === 0) ctx.setExitCode(EXIT_ALL_DROPPED);
    ctx.print(
      {
        proposed: result.proposed.map((p) => ({
          id: p.id,
          slot: p.slot,
          text: p.text,
          attested: p.attested,
          attestation: p.attestation,
          status: p.status,
        })),
        dropped: result.dropped,
      },
      () =>
        [
          `proposed ${result.proposed.length}, dropped ${result.dropped.length}`,
          ...result.dropped.map((d) => `DROPPED ${d.code} ${d.slot}: ${d.text}\n  ${d.reason}`),
          ...result.proposed.map(
            (p) =>
              `${p.status === 'active' ? 'LIVE' : 'PROPOSED'} [${p.id}] ${p.slot}: ${p.text}${verdictLine(p)}`,
          ),
        ].join('\n'),
    );
  },
});

/** `pile`: the proposals awaiting the owner, each with the turn it cites. */
export const pileCommand = defineCommand({
  path: ['pile'],
  summary: 'Lists the proposals awaiting the owner’s decision, each with the turn it cites.',
  options: SUBJECT_OPTION,
  async run(ctx) {
    const pending = await ctx.withSubject(ctx.values.subject, (me) => me.gate.pile());
    ctx.print(
      {
        pending: pending.map((p) => ({
          ...factToJson(p.fact),
          citedTurn:
            p.citedTurn === null
              ? null
              : {
                  seq: p.citedTurn.seq,
                  role: p.citedTurn.role,
                  content: p.citedTurn.content,
                  sessionId: p.citedTurn.sessionId,
                },
          verdictNow: p.verdictNow,
        })),
      },
      () =>
        pending.length === 0
          ? 'the pile is empty'
          : pending
              .map(
                (p) =>
                  `[${p.fact.id}] ${p.fact.slot} (${p.fact.origin}): ${p.fact.text}${verdictLine(p.fact)}\n` +
                  (p.verdictNow !== null && storedVerdictDiffers(p.fact, p.verdictNow) !== null
                    ? `  STORED VERDICT DIFFERS: the gate reads this quote now as ${p.verdictNow.verdict}: ${p.verdictNow.reason}\n`
                    : '') +
                  `  quote: "${p.fact.evidence.quote ?? ''}" in turn #${p.fact.evidence.seq ?? '?'}: ${p.citedTurn?.content ?? '(missing)'}`,
              )
              .join('\n'),
    );
  },
});

/** `dropped`: what the gate refused, newest first, with each code and reason. */
export const droppedCommand = defineCommand({
  path: ['dropped'],
  summary: 'Lists the proposals the gate dropped, newest first, each with its code and reason.',
  options: {
    ...SUBJECT_OPTION,
    limit: { kind: 'int', value: 'N', min: 1, help: 'at most N (default 100)' },
  },
  async run(ctx) {
    const { limit } = ctx.values;
    const rows = await ctx.withSubject(ctx.values.subject, (me) =>
      me.gate.dropped(limit === undefined ? {} : { limit }),
    );
    ctx.print(
      {
        dropped: rows.map((d) => ({
          id: d.id,
          sessionId: d.sessionId,
          slot: d.slot,
          text: d.text,
          code: d.code,
          reason: d.reason,
          proposedBy: d.proposedBy,
          droppedAt: d.droppedAt.toISOString(),
          proposal: d.proposal,
          digest: d.digest,
        })),
      },
      () =>
        rows.length === 0
          ? 'nothing dropped'
          : rows.map((d) => `${d.code} ${d.slot}: ${d.text}\n  ${d.reason}`).join('\n'),
    );
  },
});

/** `decide`: the owner approves or rejects one proposal, signed with the owner key. */
export const decideCommand = defineCommand({
  path: ['decide'],
  summary: 'Approves or rejects one proposal with a signed, chained owner decision.',
  positionals: ['<proposalId>', 'approve|reject'],
  options: {
    ...SUBJECT_OPTION,
    ...KEY_OPTIONS,
    note: { kind: 'text', value: 'N', help: 'a note recorded with the decision' },
    supersede: {
      kind: 'flag',
      help: 'approve an older value over a newer live one for the same slot and key',
    },
    text: {
      kind: 'text',
      value: 'T',
      help: 'approve this text instead (checked by the gate against the same evidence)',
    },
  },
  async run(ctx) {
    const [id, given] = ctx.positionals;
    const proposalId = id as FactId | undefined;
    if (proposalId === undefined || given === undefined) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        'usage: memledger decide <proposalId> approve|reject',
      );
    }
    const decision = parseChoice(DECISIONS, given, 'the decision');
    const { note } = ctx.values;
    const result = await ctx.withSubject(ctx.values.subject, async (me) => {
      // Found before the passphrase is asked for: an unknown proposal needs no key.
      try {
        await me.facts.get(proposalId);
      } catch (err) {
        if (err instanceof EngineError && err.code === 'FACT_NOT_FOUND') {
          throw new EngineError('PROPOSAL_NOT_FOUND', `no proposal "${proposalId}"`);
        }
        throw err;
      }
      // The key file holding the subject's stored key (named, or found by its id).
      const { signer, keyFile } = await ownerSigner(ctx, me);
      const decided = await me.owner.decide({
        proposalId,
        decision,
        signer,
        ...(note === undefined ? {} : { note }),
        ...(ctx.values.supersede === true ? { supersede: true } : {}),
        ...(ctx.values.text === undefined ? {} : { text: ctx.values.text }),
      });
      recordSignedHead(ctx, keyFile, me, decided);
      return decided;
    });
    ctx.print(
      result,
      () =>
        (result.edited === undefined
          ? ''
          : `edited ${result.edited.from} ("${shownInline(result.edited.proposed)}") into ${result.proposalId}${result.edited.attested ? '' : ' [UNATTESTED: the quote does not assert it]'}; `) +
        `${result.decision === 'approve' ? 'approved' : 'rejected'} ${result.proposalId}: now ${result.status} (decision #${result.seq})`,
    );
  },
});
