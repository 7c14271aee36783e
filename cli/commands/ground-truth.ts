import { ACTION_STATUSES } from '../../src/domain/action.js';
import { COMMITMENT_STATUSES, type Commitment } from '../../src/domain/commitment.js';
import { EngineError } from '../../src/domain/errors.js';
import { shownInline, shownJson } from '../../src/domain/shown-text.js';
import { defineCommand } from '../command.js';
import { SUBJECT_OPTION } from '../options.js';

/** A commitment as the CLI prints it in JSON: its strings shown as stored text is. */
function commitmentJson(c: Commitment) {
  return shownJson({
    id: c.id,
    subject: c.subjectId,
    title: c.title,
    due: c.due,
    status: c.status,
    createdAt: c.createdAt.toISOString(),
  });
}

const commitmentLine = (c: Commitment) =>
  `[${shownInline(c.id)}] ${c.status.toUpperCase()} ${shownInline(c.title)}${c.due === null ? '' : ` (due ${shownInline(c.due)})`}`;

/** `commitment add`: something the agent promised. */
export const commitmentAddCommand = defineCommand({
  path: ['commitment', 'add'],
  summary: 'Records a commitment (something the agent promised), open until done or dropped.',
  options: {
    title: { kind: 'text', value: 'T', required: true, help: 'what was promised' },
    due: { kind: 'text', value: 'YYYY-MM-DD', help: 'when it is due' },
    ...SUBJECT_OPTION,
  },
  async run(ctx) {
    const { title, due } = ctx.values;
    const c = await ctx.withSubject(ctx.values.subject, (me) =>
      me.commitments.add({ title, ...(due === undefined ? {} : { due }) }),
    );
    ctx.print(commitmentJson(c), () => commitmentLine(c));
  },
});

function closeCommand(kind: 'done' | 'drop') {
  return defineCommand({
    path: ['commitment', kind],
    summary: kind === 'done' ? 'Marks an open commitment done.' : 'Drops an open commitment.',
    positionals: ['<id>'],
    options: SUBJECT_OPTION,
    async run(ctx) {
      const [id] = ctx.positionals;
      if (id === undefined)
        throw new EngineError('INVALID_ARGUMENT', `usage: memledger commitment ${kind} <id>`);
      const c = await ctx.withSubject(ctx.values.subject, (me) =>
        kind === 'done' ? me.commitments.done(id) : me.commitments.drop(id),
      );
      ctx.print(commitmentJson(c), () => commitmentLine(c));
    },
  });
}

/** `commitment done <id>`. */
export const commitmentDoneCommand = closeCommand('done');
/** `commitment drop <id>`. */
export const commitmentDropCommand = closeCommand('drop');

/** `commitment list`: the subject's commitments. */
export const commitmentListCommand = defineCommand({
  path: ['commitment', 'list'],
  summary: 'Lists the subject’s commitments.',
  options: {
    status: { kind: 'choice', choices: COMMITMENT_STATUSES, help: 'only these' },
    ...SUBJECT_OPTION,
    limit: { kind: 'int', value: 'N', min: 1, help: 'at most N' },
  },
  async run(ctx) {
    const { status, limit } = ctx.values;
    const list = await ctx.withSubject(ctx.values.subject, (me) =>
      me.commitments.list({
        ...(status === undefined ? {} : { status }),
        ...(limit === undefined ? {} : { limit }),
      }),
    );
    ctx.print({ commitments: list.map(commitmentJson) }, () =>
      list.length === 0 ? 'no commitments' : list.map(commitmentLine).join('\n'),
    );
  },
});

/** `action record`: something the agent did, as the host confirmed it. */
export const actionRecordCommand = defineCommand({
  path: ['action', 'record'],
  summary: 'Records an action the agent took, as the host confirmed it.',
  options: {
    tool: { kind: 'text', value: 'T', required: true, help: 'the tool that acted' },
    surface: { kind: 'text', value: 'S', required: true, help: 'where it acted' },
    target: { kind: 'text', value: 'TEXT', required: true, help: 'what it acted on' },
    status: { kind: 'choice', choices: ACTION_STATUSES, help: 'default confirmed' },
    'completed-at': { kind: 'date', value: 'ISO', help: 'when it completed (default now)' },
    ...SUBJECT_OPTION,
  },
  async run(ctx) {
    const { tool, surface, target, status } = ctx.values;
    const completedAt = ctx.values['completed-at'];
    const a = await ctx.withSubject(ctx.values.subject, (me) =>
      me.actions.record({
        tool,
        surface,
        target,
        ...(status === undefined ? {} : { status }),
        ...(completedAt === undefined ? {} : { completedAt }),
      }),
    );
    ctx.print(
      shownJson({
        id: a.id,
        tool: a.tool,
        surface: a.surface,
        target: a.target,
        status: a.status,
        completedAt: a.completedAt?.toISOString() ?? null,
      }),
      () =>
        `recorded action ${shownInline(a.tool)} on ${shownInline(a.surface)} → ${shownInline(a.target)} (${a.status})`,
    );
  },
});

/** `tool register`: which surfaces bind a tool. */
export const toolRegisterCommand = defineCommand({
  path: ['tool', 'register'],
  summary: 'Registers a tool and the surfaces that bind it (the capability map).',
  options: {
    name: { kind: 'text', value: 'N', required: true, help: 'the tool name' },
    surfaces: { kind: 'list', value: 'chat,wake', required: true, help: 'where it is bound' },
    description: { kind: 'text', value: 'D', help: 'what it does' },
    ...SUBJECT_OPTION,
  },
  async run(ctx) {
    const { name, description } = ctx.values;
    const surfaces = [...ctx.values.surfaces];
    await ctx.withSubject(ctx.values.subject, (me) =>
      me.tools.register({
        name,
        surfaces,
        ...(description === undefined ? {} : { description }),
      }),
    );
    ctx.print({ name, surfaces }, () => `tool ${name} on ${surfaces.join(', ')}`);
  },
});

/** `tool list`: the registered tools, or those a surface binds. */
export const toolListCommand = defineCommand({
  path: ['tool', 'list'],
  summary: 'Lists the registered tools, or only those bound on a surface.',
  options: {
    surface: { kind: 'text', value: 'S', help: 'only the tools bound here' },
    ...SUBJECT_OPTION,
  },
  async run(ctx) {
    const { surface } = ctx.values;
    const tools = await ctx.withSubject(ctx.values.subject, async (me) => {
      const all = await me.tools.list();
      if (surface === undefined) return all;
      const bound = new Set(await me.tools.forSurface(surface));
      return all.filter((t) => bound.has(t.name));
    });
    ctx.print({ tools }, () =>
      tools.length === 0
        ? 'no tools'
        : tools
            .map((t) => `${t.name} [${t.surfaces.join(', ')}] ${t.description}`.trimEnd())
            .join('\n'),
    );
  },
});

/** `timezone`: the subject's time zone, set or read. */
export const timezoneCommand = defineCommand({
  path: ['timezone'],
  summary: 'Prints the subject’s time zone, or sets it (an IANA name; default clears it).',
  options: {
    zone: { kind: 'text', value: 'Europe/Stockholm|default', help: 'the zone to set' },
    ...SUBJECT_OPTION,
  },
  async run(ctx) {
    const { zone } = ctx.values;
    const current = await ctx.withSubject(ctx.values.subject, async (me) => {
      if (zone !== undefined) await me.arrival.setTimeZone(zone === 'default' ? null : zone);
      return me.arrival.timeZone();
    });
    ctx.print({ timeZone: current }, () => current);
  },
});
