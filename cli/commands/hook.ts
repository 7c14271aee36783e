import { EngineError } from '../../src/domain/errors.js';
import {
  parseHookInput,
  parseTranscript,
  type HookInput,
  type TranscriptParse,
} from '../claude-transcript.js';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { CliError, renderError } from '../errors.js';
import {
  ensureSession,
  handleMemory,
  httpMemory,
  type AgentMemory,
} from '../../adapters/agent-memory.js';
import { SUBJECT_OPTION, type OptionSpecs } from '../options.js';
import { readTokenFile } from '../token-file.js';

const INPUT_OPTION = {
  input: {
    kind: 'text',
    value: 'FILE',
    help: 'read the hook input (JSON) from FILE instead of standard input',
  },
  url: {
    kind: 'text',
    value: 'URL',
    help: 'a running `memledger serve` (e.g. http://127.0.0.1:7777) to go through, with --token-file: a server holds an embedded store open, so a hook cannot open it too',
  },
  'token-file': {
    kind: 'text',
    value: 'F',
    help: 'with --url: a file holding an agent token (its subject is the hook\u2019s)',
  },
} as const satisfies OptionSpecs;

type HookContext = CommandContext<typeof INPUT_OPTION & typeof SUBJECT_OPTION>;

/** The store a hook works on: the local one (--db, --subject), or a server's (--url, --token-file). */
async function withMemory<T>(ctx: HookContext, fn: (m: AgentMemory) => Promise<T>): Promise<T> {
  const { url, subject } = ctx.values;
  const file = ctx.values['token-file'];
  if (url === undefined) {
    if (file !== undefined) {
      throw new EngineError('INVALID_ARGUMENT', '--token-file goes with --url', {
        data: { field: 'token-file' },
      });
    }
    return ctx.withSubject(subject, (me) => fn(handleMemory(me)));
  }
  if (file === undefined || subject !== undefined) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      '--url needs --token-file F (and takes no --subject: the token names it)',
      { data: { field: 'url' } },
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    parsed = new URL('invalid:');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new EngineError('INVALID_ARGUMENT', `--url must be an http(s) URL`, {
      data: { field: 'url' },
    });
  }
  return fn(
    httpMemory(parsed.href, await readTokenFile(ctx.io, file), {
      unreachable: (message) => new CliError('SERVER_UNREACHABLE', message),
    }),
  );
}

/** The hook's JSON arrives on standard input (a pipe or a socket: never reopened by path). */
async function readStandardInput(): Promise<string> {
  if (process.stdin.isTTY === true) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'a hook reads the JSON Claude Code sends on standard input; pipe it in or pass --input FILE',
    );
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readHookInput(
  ctx: Pick<CommandContext, 'io'>,
  path: string | undefined,
): Promise<HookInput> {
  let raw: string;
  if (path === undefined) {
    raw = await readStandardInput();
  } else {
    try {
      raw = await ctx.io.readFile(path);
    } catch (err) {
      throw new EngineError('INVALID_ARGUMENT', `cannot read ${path}: ${(err as Error).message}`);
    }
  }
  return parseHookInput(raw);
}

/**
 * Claude Code reads a hook's exit code 2 as "block": for Stop, its stderr would be fed to the
 * model as an instruction to keep going. A failing hook therefore exits 1 (shown, not obeyed).
 */
async function asHook(
  ctx: Pick<CommandContext, 'io' | 'setExitCode'>,
  fn: () => Promise<void>,
): Promise<void> {
  try {
    await fn();
  } catch (err) {
    ctx.io.stderr(renderError(err).text);
    ctx.setExitCode(1);
  }
}

/** The Claude session is the memledger session: made on first sight, never another's. */
function ensureHookSession(
  me: AgentMemory,
  input: HookInput,
): Promise<{ id: string; turnCount: number }> {
  const title = input.cwd === undefined ? 'Claude Code' : `Claude Code (${input.cwd})`;
  return ensureSession(me, input.sessionId, title);
}

const mismatch = (sessionId: string, why: string): EngineError =>
  new EngineError(
    'INVALID_ARGUMENT',
    `session "${sessionId}" does not hold this transcript's turns (${why}); nothing was recorded`,
  );

/** The stored turns the count skips must be the transcript's own: roles, and the person's words. */
function checkAlignment(
  sessionId: string,
  parsed: TranscriptParse,
  tail: ReadonlyArray<{ seq: number; role: string; content: string }>,
): void {
  for (const stored of tail) {
    const mine = parsed.turns[stored.seq - 1];
    if (mine === undefined || mine.role !== stored.role) {
      throw mismatch(sessionId, `turn ${stored.seq} is a ${stored.role} turn`);
    }
    if (mine.role === 'user' && mine.content !== stored.content) {
      throw mismatch(sessionId, `turn ${stored.seq} says something else`);
    }
  }
}

interface StopOutcome {
  sessionId: string;
  recorded: number;
  turns: number;
}

/**
 * Records the transcript's turns beyond those the session holds. The parse is prefix-stable
 * (claude-transcript.ts), so "beyond" is a count; the last stored turns are compared first so a
 * session that holds someone else's turns is refused rather than extended out of step.
 */
async function recordNewTurns(
  me: AgentMemory,
  input: HookInput,
  parsed: TranscriptParse,
): Promise<StopOutcome> {
  const session = await ensureHookSession(me, input);
  const held = session.turnCount;
  if (held > parsed.turns.length) {
    throw mismatch(
      session.id,
      `it holds ${held} turns, the transcript ${parsed.turns.length} so far`,
    );
  }
  if (held > 0) {
    checkAlignment(session.id, parsed, await me.turns(session.id, 2));
  }
  const now = Date.now();
  let seq = held;
  for (const turn of parsed.turns.slice(held)) {
    const at = turn.at !== undefined && turn.at.getTime() <= now ? turn.at : undefined;
    const result = await me.addTurn({
      sessionId: session.id,
      role: turn.role,
      content: turn.content,
      ...(turn.role === 'assistant' ? { receipt: turn.receipt } : {}),
      ...(at === undefined ? {} : { at }),
    });
    seq += 1;
    if (!result.recorded || result.seq !== seq) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `session "${session.id}" changed while its transcript was being recorded (turn ${seq}); run the hook again`,
      );
    }
  }
  return { sessionId: session.id, recorded: seq - held, turns: seq };
}

/** `hook stop`: the Stop hook; records the session's new turns with their receipts. */
export const hookStopCommand = defineCommand({
  path: ['hook', 'stop'],
  summary: 'Claude Code Stop hook: records the session’s new transcript turns with their receipts.',
  options: { ...SUBJECT_OPTION, ...INPUT_OPTION },
  notes: [
    'Reads the hook JSON (session_id, transcript_path) on standard input; the Claude session id is',
    'the memledger session id. Running it again records nothing new. Tool output, Claude Code’s',
    'own entries and subagents never become turns. A failure exits 1 (never 2: "block" to Claude).',
  ],
  async run(ctx) {
    await asHook(ctx, async () => {
      const input = await readHookInput(ctx, ctx.values.input);
      const path = input.transcriptPath;
      if (path === undefined || path === '') {
        throw new EngineError('INVALID_ARGUMENT', 'hook input has no "transcript_path"');
      }
      let text: string;
      try {
        text = await ctx.io.readFile(path);
      } catch (err) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `cannot read the transcript ${path}: ${(err as Error).message}`,
        );
      }
      const parsed = parseTranscript(text, { lastAssistantMessage: input.lastAssistantMessage });
      const outcome = await withMemory(ctx, (me) => recordNewTurns(me, input, parsed));
      const doc = {
        ...outcome,
        heldBack: parsed.heldBack,
        malformed: parsed.malformed,
        leftOut: parsed.leftOut,
      };
      ctx.print(doc, () =>
        [
          `recorded ${outcome.recorded} turn(s) in session ${outcome.sessionId} (${outcome.turns} in all)`,
          ...(parsed.heldBack ? ['the last reply is not in the transcript yet: held back'] : []),
          ...(parsed.malformed > 0 ? [`skipped ${parsed.malformed} malformed line(s)`] : []),
        ].join('\n'),
      );
    });
  },
});

/** `hook session-start`: the SessionStart hook; prints the arrival for the session. */
export const hookSessionStartCommand = defineCommand({
  path: ['hook', 'session-start'],
  summary: 'Claude Code SessionStart hook: prints the arrival for the session (added to context).',
  options: {
    ...SUBJECT_OPTION,
    ...INPUT_OPTION,
    surface: { kind: 'text', value: 'S', help: 'the surface the agent arrives on (default code)' },
  },
  notes: [
    'Reads the hook JSON (session_id) on standard input. Prints the arrival text; with --json, the',
    'hook output {"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":…}}.',
  ],
  async run(ctx) {
    await asHook(ctx, async () => {
      const input = await readHookInput(ctx, ctx.values.input);
      const surface = ctx.values.surface ?? 'code';
      const text = await withMemory(ctx, async (me) => {
        const session = await ensureHookSession(me, input);
        return (await me.arrival({ surface, sessionId: session.id })).text;
      });
      ctx.print(
        {
          hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: text },
        },
        () => text,
      );
    });
  },
});
