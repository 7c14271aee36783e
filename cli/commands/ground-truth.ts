import { EngineError, type Commitment } from '../../src/index.js';
import { intValue, listValue, stringValue } from '../args.js';
import type { CommandContext } from '../context.js';

export const COMMITMENT_ADD_OPTIONS = {
  subject: { type: 'string' },
  title: { type: 'string' },
  due: { type: 'string' },
} as const;
export const COMMITMENT_CLOSE_OPTIONS = {} as const;
export const COMMITMENT_LIST_OPTIONS = {
  subject: { type: 'string' },
  status: { type: 'string' },
  limit: { type: 'string' },
} as const;
export const ACTION_RECORD_OPTIONS = {
  subject: { type: 'string' },
  tool: { type: 'string' },
  surface: { type: 'string' },
  target: { type: 'string' },
  status: { type: 'string' },
  'completed-at': { type: 'string' },
} as const;
export const TOOL_REGISTER_OPTIONS = {
  subject: { type: 'string' },
  name: { type: 'string' },
  description: { type: 'string' },
  surfaces: { type: 'string' },
} as const;
export const TOOL_LIST_OPTIONS = {
  subject: { type: 'string' },
  surface: { type: 'string' },
} as const;
export const TIMEZONE_OPTIONS = { subject: { type: 'string' }, zone: { type: 'string' } } as const;

const opt = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>;

function commitmentJson(c: Commitment) {
  return {
    id: c.id,
    subject: c.subjectId,
    title: c.title,
    due: c.due,
    status: c.status,
    createdAt: c.createdAt.toISOString(),
  };
}

const commitmentLine = (c: Commitment) =>
  `[${c.id}] ${c.status.toUpperCase()} ${c.title}${c.due === null ? '' : ` (due ${c.due})`}`;

export async function commitmentAddCommand(ctx: CommandContext): Promise<void> {
  const title = stringValue(ctx.values, 'title');
  if (title === undefined) throw new EngineError('INVALID_ARGUMENT', '--title is required');
  const c = await ctx.withEngine(false, (engine) =>
    engine.commitments.add({
      title,
      ...opt('due', stringValue(ctx.values, 'due')),
      ...opt('subject', stringValue(ctx.values, 'subject')),
    }),
  );
  ctx.print(commitmentJson(c), () => commitmentLine(c));
}

function closeCommand(kind: 'done' | 'drop') {
  return async (ctx: CommandContext): Promise<void> => {
    const [id] = ctx.positionals;
    if (id === undefined)
      throw new EngineError('INVALID_ARGUMENT', `usage: memledger commitment ${kind} <id>`);
    const c = await ctx.withEngine(false, (engine) =>
      kind === 'done' ? engine.commitments.done(id) : engine.commitments.drop(id),
    );
    ctx.print(commitmentJson(c), () => commitmentLine(c));
  };
}
export const commitmentDoneCommand = closeCommand('done');
export const commitmentDropCommand = closeCommand('drop');

export async function commitmentListCommand(ctx: CommandContext): Promise<void> {
  const limit = intValue(ctx.values, 'limit', 1);
  const list = await ctx.withEngine(false, (engine) =>
    engine.commitments.list({
      ...opt('subject', stringValue(ctx.values, 'subject')),
      ...opt('status', stringValue(ctx.values, 'status')),
      ...(limit === undefined ? {} : { limit }),
    }),
  );
  ctx.print({ commitments: list.map(commitmentJson) }, () =>
    list.length === 0 ? 'no commitments' : list.map(commitmentLine).join('\n'),
  );
}

export async function actionRecordCommand(ctx: CommandContext): Promise<void> {
  const v = (n: string) => stringValue(ctx.values, n);
  const tool = v('tool');
  const surface = v('surface');
  const target = v('target');
  if (tool === undefined || surface === undefined || target === undefined) {
    throw new EngineError('INVALID_ARGUMENT', 'action record needs --tool, --surface and --target');
  }
  const at = v('completed-at');
  const completedAt = at === undefined ? undefined : new Date(at);
  if (completedAt !== undefined && Number.isNaN(completedAt.getTime())) {
    throw new EngineError('INVALID_ARGUMENT', `--completed-at is not a time: "${at ?? ''}"`);
  }
  const a = await ctx.withEngine(false, (engine) =>
    engine.actions.record({
      tool,
      surface,
      target,
      ...opt('status', v('status')),
      ...opt('subject', v('subject')),
      ...(completedAt === undefined ? {} : { completedAt }),
    }),
  );
  ctx.print(
    {
      id: a.id,
      tool: a.tool,
      surface: a.surface,
      target: a.target,
      status: a.status,
      completedAt: a.completedAt?.toISOString() ?? null,
    },
    () => `recorded action ${a.tool} on ${a.surface} → ${a.target} (${a.status})`,
  );
}

export async function toolRegisterCommand(ctx: CommandContext): Promise<void> {
  const name = stringValue(ctx.values, 'name');
  const surfaces = listValue(ctx.values, 'surfaces');
  if (name === undefined || surfaces === undefined) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'tool register needs --name and --surfaces chat,wake',
    );
  }
  await ctx.withEngine(false, (engine) =>
    engine.tools.register({
      name,
      surfaces,
      ...opt('description', stringValue(ctx.values, 'description')),
      ...opt('subject', stringValue(ctx.values, 'subject')),
    }),
  );
  ctx.print({ name, surfaces }, () => `tool ${name} on ${surfaces.join(', ')}`);
}

export async function toolListCommand(ctx: CommandContext): Promise<void> {
  const surface = stringValue(ctx.values, 'surface');
  const subject = stringValue(ctx.values, 'subject');
  const tools = await ctx.withEngine(false, async (engine) => {
    const all = await engine.tools.list(subject === undefined ? {} : { subject });
    if (surface === undefined) return all;
    const bound = new Set(
      await engine.tools.toolsFor(surface, subject === undefined ? {} : { subject }),
    );
    return all.filter((t) => bound.has(t.name));
  });
  ctx.print({ tools }, () =>
    tools.length === 0
      ? 'no tools'
      : tools
          .map((t) => `${t.name} [${t.surfaces.join(', ')}] ${t.description}`.trimEnd())
          .join('\n'),
  );
}

export async function timezoneCommand(ctx: CommandContext): Promise<void> {
  const zone = stringValue(ctx.values, 'zone');
  const subject = stringValue(ctx.values, 'subject');
  const current = await ctx.withEngine(false, async (engine) => {
    if (zone !== undefined)
      await engine.timeZone.set({
        zone: zone === 'default' ? null : zone,
        ...opt('subject', subject),
      });
    return engine.timeZone.get(subject === undefined ? {} : { subject });
  });
  ctx.print({ timeZone: current }, () => current);
}
