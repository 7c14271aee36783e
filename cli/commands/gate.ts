import { EngineError, loadOwnerKey } from '../../src/index.js';
import { intValue, stringValue } from '../args.js';
import type { CommandContext } from '../context.js';
import { factToJson } from '../fact-json.js';
import { KEY_OPTIONS, keyPath, passphrase } from '../owner-key-options.js';

export const PROPOSE_OPTIONS = {
  session: { type: 'string' },
  file: { type: 'string' },
  by: { type: 'string' },
} as const;
export const PILE_OPTIONS = { subject: { type: 'string' } } as const;
export const DROPPED_OPTIONS = { subject: { type: 'string' }, limit: { type: 'string' } } as const;
export const DECIDE_OPTIONS = { ...KEY_OPTIONS, note: { type: 'string' } } as const;

export async function proposeCommand(ctx: CommandContext): Promise<void> {
  const file = stringValue(ctx.values, 'file');
  if (file === undefined)
    throw new EngineError('INVALID_ARGUMENT', '--file proposals.json is required');
  let raw: string;
  try {
    raw = await ctx.io.readFile(file);
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
  const sessionId = stringValue(ctx.values, 'session');
  const by = stringValue(ctx.values, 'by');
  const result = await ctx.withEngine(false, (engine) =>
    engine.propose({
      sessionId,
      proposals: parsed as unknown[],
      ...(by === undefined ? {} : { proposedBy: by }),
    }),
  );
  ctx.print(
    {
      proposed: result.proposed.map((p) => ({
        id: p.id,
        slot: p.slot,
        text: p.text,
        attested: p.attested,
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
            `${p.status === 'active' ? 'LIVE' : 'PROPOSED'} [${p.id}] ${p.slot}: ${p.text}${p.attested ? '' : '  (UNATTESTED)'}`,
        ),
      ].join('\n'),
  );
}

export async function pileCommand(ctx: CommandContext): Promise<void> {
  const subject = stringValue(ctx.values, 'subject');
  const pending = await ctx.withEngine(false, (engine) =>
    engine.pile(subject === undefined ? {} : { subject }),
  );
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
      })),
    },
    () =>
      pending.length === 0
        ? 'the pile is empty'
        : pending
            .map(
              (p) =>
                `[${p.fact.id}] ${p.fact.slot} (${p.fact.origin})${p.fact.attested ? '' : ' UNATTESTED'}: ${p.fact.text}\n` +
                `  quote: "${p.fact.evidence.quote ?? ''}" in turn #${p.fact.evidence.seq ?? '?'}: ${p.citedTurn?.content ?? '(missing)'}`,
            )
            .join('\n'),
  );
}

export async function droppedCommand(ctx: CommandContext): Promise<void> {
  const subject = stringValue(ctx.values, 'subject');
  const limit = intValue(ctx.values, 'limit', 1);
  const rows = await ctx.withEngine(false, (engine) =>
    engine.dropped({
      ...(subject === undefined ? {} : { subject }),
      ...(limit === undefined ? {} : { limit }),
    }),
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
      })),
    },
    () =>
      rows.length === 0
        ? 'nothing dropped'
        : rows.map((d) => `${d.code} ${d.slot}: ${d.text}\n  ${d.reason}`).join('\n'),
  );
}

export async function decideCommand(ctx: CommandContext): Promise<void> {
  const [proposalId, decision] = ctx.positionals;
  if (proposalId === undefined || decision === undefined || ctx.positionals.length > 2) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'usage: memledger decide <proposalId> approve|reject',
    );
  }
  if (decision !== 'approve' && decision !== 'reject') {
    throw new EngineError('INVALID_ARGUMENT', `a decision is approve or reject, not "${decision}"`);
  }
  const note = stringValue(ctx.values, 'note');
  const result = await ctx.withEngine(false, async (engine) => {
    const fact = await engine.fact(proposalId);
    if (fact === null) throw new EngineError('PROPOSAL_NOT_FOUND', `no proposal "${proposalId}"`);
    const signer = loadOwnerKey(
      keyPath(ctx, fact.subjectId),
      await passphrase(ctx, 'Owner passphrase: '),
    );
    return engine.decide({ proposalId, decision, signer, ...(note === undefined ? {} : { note }) });
  });
  ctx.print(
    result,
    () =>
      `${result.decision}d ${result.proposalId}: now ${result.status} (decision #${result.seq})`,
  );
}
