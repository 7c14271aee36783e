// Issue 37, item 4: conversations exported from ChatGPT, Claude, Claude Code and OpenAI-style
// messages files become sessions and turns with their real dates, speakers and receipts; a
// malformed conversation is skipped with its reason, a second import records nothing, a grown
// conversation appends only its new turns, and nothing imported is memory until the gate.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChatGptExport } from '../src/domain/history-import/chatgpt-export.js';
import { parseClaudeExport } from '../src/domain/history-import/claude-export.js';
import type {
  HistoryParse,
  ImportedConversation,
} from '../src/domain/history-import/imported-conversation.js';
import { parseOpenAiMessages } from '../src/domain/history-import/openai-messages.js';
import type { SubjectHandle, Turn } from '../src/index.js';
import { runCliCaptured } from './support/cli.js';
import { dumpStore } from './support/dump-store.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';
import { sharedEngines } from './support/shared-engines.js';

const FIXTURES = join(import.meta.dirname, 'fixtures/history');
const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
const json = (name: string): unknown => JSON.parse(fixture(name));

const CHATGPT_A = 'chatgpt:6630a1b2-0000-4000-8000-00000000a001';
const CHATGPT_B = 'chatgpt:6630a1b2-0000-4000-8000-00000000b002';
const CLAUDE_1 = 'claude:f0c1a9e2-1111-4a4a-9b9b-000000000001';
const CLAUDE_3 = 'claude:f0c1a9e2-3333-4a4a-9b9b-000000000003';
const CLAUDE_CODE = '3f2b7c1e-5d4a-4e8b-9c2d-1a2b3c4d5e6f';

/** A turn as these tests compare it. */
const shape = (t: Turn) => ({
  seq: t.seq,
  role: t.role,
  content: t.content,
  at: t.recordedAt.toISOString(),
  ...(t.speaker === null ? {} : { speaker: t.speaker }),
  ...(t.receipt === null ? {} : { receipt: t.receipt }),
});

const tools = (names: string[], sources: string[] = []) => ({
  kind: 'tools',
  tools: names,
  sources,
});
const NONE = { kind: 'none' };
const UNKNOWN = { kind: 'unknown' };

const CHATGPT_A_TURNS = [
  {
    seq: 1,
    role: 'user',
    content: "I'm flying to Lisbon on 12 May. What's the weather like then?",
    at: '2024-05-01T10:01:00.000Z',
  },
  {
    seq: 2,
    role: 'assistant',
    content: 'Mid-May in Lisbon is mild: highs around 22C and little rain.',
    at: '2024-05-01T10:01:20.000Z',
    receipt: tools(
      ['web.run'],
      ['https://weather.example/lisbon/may', 'https://travel.example/portugal/lisbon'],
    ),
  },
  {
    seq: 3,
    role: 'user',
    content: "Thanks! I'm vegetarian, any restaurant tips?",
    at: '2024-05-01T10:10:00.000Z',
  },
  {
    seq: 4,
    role: 'assistant',
    content: 'Try the Ao 26 Vegan Food Project in Chiado.',
    at: '2024-05-01T10:10:40.000Z',
    receipt: NONE,
  },
];

const CLAUDE_1_TURNS = [
  {
    seq: 1,
    role: 'user',
    content: 'My starter smells like nail polish. Is it dead?',
    at: '2025-03-02T09:00:05.000Z',
  },
  {
    seq: 2,
    role: 'assistant',
    content: 'Let me check. It is hungry, not dead: feed it twice a day.',
    at: '2025-03-02T09:00:12.000Z',
    receipt: tools(
      ['web_search'],
      ['https://bread.example/acetone', 'https://flour.example/feeding'],
    ),
  },
  { seq: 3, role: 'user', content: 'I bake every Sunday.', at: '2025-03-02T09:10:00.000Z' },
  {
    seq: 4,
    role: 'assistant',
    content: 'Then feed it on Saturday morning.',
    at: '2025-03-02T09:10:04.000Z',
    receipt: UNKNOWN,
  },
];

const keys = (p: HistoryParse) => p.conversations.map((c) => c.key);

describe('the parsers', () => {
  it('read ChatGPT’s active branch only, with tool runs and their sources, and skip a broken conversation', () => {
    const p = parseChatGptExport(json('chatgpt-conversations.json'));
    expect(keys(p)).toEqual([CHATGPT_A, CHATGPT_B]);
    expect(p.skipped).toEqual([
      {
        conversation: '6630a1b2-0000-4000-8000-00000000c003',
        reason: 'node missing-node is not in its mapping',
      },
    ]);
    const all = JSON.stringify(p.conversations);
    // the regenerated reply and the edited prompt hang off other branches
    expect(all).not.toContain('REGENERATED AWAY');
    expect(all).not.toContain('EDITED AWAY');
    // custom instructions and image pointers are not words said in the conversation
    expect(all).not.toContain('I live in Porto');
    expect(all).not.toContain('file-service');
    // negative control: the same mapping with current_node on the old reply reads that branch
    const doc = json('chatgpt-conversations.json') as Array<Record<string, unknown>>;
    doc[0]!.current_node = 'a2-old';
    expect(JSON.stringify(parseChatGptExport(doc).conversations[0])).toContain('REGENERATED AWAY');
  });

  it('read Claude’s chat messages, tool blocks and citations; skip a conversation with an unknown sender', () => {
    const p = parseClaudeExport(json('claude-conversations.json'));
    expect(keys(p)).toEqual([CLAUDE_1, CLAUDE_3]);
    expect(p.skipped).toEqual([
      {
        conversation: 'f0c1a9e2-2222-4a4a-9b9b-000000000002',
        reason: 'a message has the unknown sender "robot"',
      },
    ]);
    // an attachment's extracted text is a file, not what the person typed
    expect(JSON.stringify(p.conversations)).not.toContain('ATTACHED');
    expect(p.conversations[1]!.title).toBe('Claude conversation');
  });

  it('pair each Claude tool result with its call: one failed call of a tool that also ran does not mark both', () => {
    const doc = [
      {
        uuid: 'c-pair',
        name: 'twice',
        created_at: '2026-03-01T10:00:00Z',
        chat_messages: [
          {
            uuid: 'h',
            sender: 'human',
            text: 'Look it up twice.',
            created_at: '2026-03-01T10:00:00Z',
          },
          {
            uuid: 'a',
            sender: 'assistant',
            created_at: '2026-03-01T10:00:05Z',
            content: [
              { type: 'tool_use', id: 'u1', name: 'web_search', input: { query: 'x' } },
              {
                type: 'tool_result',
                tool_use_id: 'u1',
                name: 'web_search',
                is_error: true,
                content: [],
              },
              { type: 'tool_use', id: 'u2', name: 'web_search', input: { query: 'y' } },
              {
                type: 'tool_result',
                tool_use_id: 'u2',
                name: 'web_search',
                content: [{ type: 'knowledge', url: 'https://ok.example/a' }],
              },
              { type: 'text', text: 'Found it.' },
            ],
          },
        ],
      },
    ];
    const reply = parseClaudeExport(doc).conversations[0]!.turns[1]!;
    expect(reply.receipt).toEqual({
      tools: ['web_search (error)', 'web_search'],
      sources: ['https://ok.example/a'],
    });
  });

  it('read OpenAI messages as one list or as JSON Lines of conversations', () => {
    const one = parseOpenAiMessages(fixture('openai-messages.json'), 'openai-messages');
    expect(keys(one)).toEqual(['openai:openai-messages']);
    expect(one.skipped).toEqual([]);
    const lines = parseOpenAiMessages(fixture('openai-messages.jsonl'), 'openai-messages');
    expect(keys(lines)).toEqual(['openai:chat-001', 'openai:openai-messages:3']);
    expect(lines.skipped).toEqual([
      { conversation: 'openai-messages:2', reason: 'message 1 has no known role' },
    ]);
  });

  it('refuse a file of another format whole, with INVALID_ARGUMENT', () => {
    const claude = json('claude-conversations.json');
    const chatgpt = json('chatgpt-conversations.json');
    expect(() => parseChatGptExport(claude)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => parseClaudeExport(chatgpt)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => parseChatGptExport({ hello: 1 })).toThrow(/not a chatgpt export/);
    expect(() => parseOpenAiMessages('{"a": 1}', 'x')).toThrow(/not a openai-messages export/);
    expect(() => parseOpenAiMessages('not json\nat all', 'x')).toThrow(/neither JSON/);
    // negative controls: each reads its own format
    expect(parseChatGptExport(chatgpt).conversations).toHaveLength(2);
    expect(parseClaudeExport(claude).conversations).toHaveLength(2);
  });
});

/** A conversation written here, for what the fixtures cannot show. */
const made = (key: string, texts: string[], at?: (i: number) => Date): ImportedConversation => ({
  key,
  title: 'Made here',
  createdAt: new Date('2024-02-01T00:00:00Z'),
  turns: texts.map((text, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    blocks: [{ type: 'text' as const, text }],
    at: at?.(i) ?? new Date(Date.UTC(2024, 1, 1, 0, i)),
    ...(i % 2 === 1 ? { receipt: { noTools: true } } : {}),
  })),
});

describe.each(ENGINES)('importing conversations [%s]', (kind) => {
  let t: TestEngine;
  let me: SubjectHandle;

  beforeAll(async () => {
    t = await openTestEngine(kind);
    await t.engine.subjects.create();
    me = t.engine.subject();
  });
  afterAll(() => t.close());

  const turnsOf = async (id: string) => (await me.history.turns(id)).map(shape);

  it('records each conversation as a session with its turns, dates and receipts', async () => {
    const progress: number[] = [];
    const parsed = parseChatGptExport(json('chatgpt-conversations.json'));
    const r = await me.history.importConversations(parsed.conversations, {
      onProgress: (p) => progress.push(p.done),
    });
    expect(r).toEqual({ sessions: 2, grown: 0, turns: 6, unchanged: 0, skipped: [] });
    expect(progress).toEqual([1, 2]);
    expect(await turnsOf(CHATGPT_A)).toEqual(CHATGPT_A_TURNS);
    expect(await turnsOf(CHATGPT_B)).toEqual([
      {
        seq: 1,
        role: 'user',
        content: 'Here are my run distances: 5, 8, 13 km. Average?',
        at: '2024-05-02T10:00:10.000Z',
      },
      {
        seq: 2,
        role: 'assistant',
        content: 'Your average run is about 8.7 km.',
        at: '2024-05-02T10:00:20.000Z',
        receipt: tools(['python']),
      },
    ]);
    const session = await me.sessions.get(CHATGPT_A);
    expect(session.title).toBe('Lisbon in May');
    expect(session.createdAt.toISOString()).toBe('2024-05-01T10:00:00.000Z');

    const claude = parseClaudeExport(json('claude-conversations.json'));
    expect(await me.history.importConversations(claude.conversations)).toMatchObject({
      sessions: 2,
      turns: 6,
    });
    expect(await turnsOf(CLAUDE_1)).toEqual(CLAUDE_1_TURNS);
    expect((await turnsOf(CLAUDE_3)).map((x) => x.receipt ?? null)).toEqual([null, UNKNOWN]);
  });

  it('keeps speakers, and records turns the export gives no date at the time of import', async () => {
    const before = Date.now();
    const parsed = parseOpenAiMessages(fixture('openai-messages.json'), 'openai-messages');
    await me.history.importConversations(parsed.conversations);
    const turns = await me.history.turns('openai:openai-messages');
    expect(turns.map((x) => [x.role, x.speaker, x.receipt])).toEqual([
      ['system', null, null],
      ['user', 'dana', null],
      ['assistant', null, tools(['get_weather'])],
      ['user', 'dana', null],
      ['assistant', null, tools(['web_search'], ['https://news.example/porto-metro'])],
      ['user', null, null],
      ['assistant', null, UNKNOWN],
    ]);
    expect(turns[2]!.content).toBe('It is 18C and cloudy in Porto.');
    for (const x of turns) expect(x.recordedAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('records nothing the second time the same export is imported', async () => {
    const before = await dumpStore(t.engine);
    const parsed = parseChatGptExport(json('chatgpt-conversations.json'));
    const r = await me.history.importConversations(parsed.conversations);
    expect(r).toEqual({ sessions: 0, grown: 0, turns: 0, unchanged: 2, skipped: [] });
    const claude = parseClaudeExport(json('claude-conversations.json'));
    expect(await me.history.importConversations(claude.conversations)).toMatchObject({
      unchanged: 2,
      turns: 0,
    });
    expect(await dumpStore(t.engine)).toEqual(before);
    // negative control: a conversation not yet held does change the store
    await me.history.importConversations([made('made:new-one', ['Hello there.', 'Hi.'])]);
    expect(await dumpStore(t.engine)).not.toEqual(before);
  });

  it('appends only the new turns of a conversation that grew since, and refuses one that differs', async () => {
    const first = made('made:grows', ['I have two cats.', 'Nice.']);
    expect(await me.history.importConversations([first])).toMatchObject({ sessions: 1, turns: 2 });
    const later = made('made:grows', ['I have two cats.', 'Nice.', 'One is called Miso.', 'Cute.']);
    expect(await me.history.importConversations([later])).toEqual({
      sessions: 0,
      grown: 1,
      turns: 2,
      unchanged: 0,
      skipped: [],
    });
    expect((await me.history.turns('made:grows')).map((x) => [x.seq, x.content])).toEqual([
      [1, 'I have two cats.'],
      [2, 'Nice.'],
      [3, 'One is called Miso.'],
      [4, 'Cute.'],
    ]);
    const other = made('made:grows', ['I have three dogs.', 'Nice.', 'More.', 'Yes.', 'Five.']);
    const r = await me.history.importConversations([other]);
    expect(r.skipped).toEqual([
      {
        conversation: 'made:grows',
        reason: 'session made:grows holds other turns from turn 1 on; nothing recorded',
      },
    ]);
    expect(r.turns).toBe(0);
    expect(await me.history.turns('made:grows')).toHaveLength(4);
  });

  it('skips a conversation whose turn fails validation whole, and records the rest', async () => {
    const future = made('made:future', ['One.', 'Two.', 'Three.'], (i) =>
      i === 2 ? new Date(Date.now() + 86_400_000) : new Date('2024-03-01T00:00:00Z'),
    );
    const fine = made('made:fine', ['Fine.', 'Yes.']);
    const before = await dumpStore(t.engine);
    const r = await me.history.importConversations([future, fine]);
    expect(r).toEqual({
      sessions: 1,
      grown: 0,
      turns: 2,
      unchanged: 0,
      skipped: [
        {
          conversation: 'made:future',
          reason: 'turn 3: a turn cannot be recorded in the future; nothing recorded',
        },
      ],
    });
    expect(await code(me.sessions.get('made:future'))).toBe('SESSION_NOT_FOUND');
    expect(await me.history.turns('made:fine')).toHaveLength(2);
    const bad = { ...fine, key: 'not a session id' };
    const r2 = await me.history.importConversations([bad]);
    expect(r2.skipped[0]?.reason).toMatch(/^its key is not a session id/);
    expect(await code(me.history.importConversations('nope' as never))).toBe('INVALID_ARGUMENT');
    const after = await dumpStore(t.engine);
    expect(after.turns).not.toEqual(before.turns); // made:fine's two turns, nothing else
  });

  it('makes no memory: facts come only through the gate, quoting an imported user turn', async () => {
    expect(await me.facts.live()).toEqual([]);
    expect(await me.gate.pileCount()).toBe(0);
    const out = await me.gate.propose({
      sessionId: CHATGPT_A,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user is vegetarian.',
          origin: 'saw',
          evidence: { turn: 3, quote: "I'm vegetarian" },
        },
        // negative control: the assistant's imported words are never evidence
        {
          slot: 'what_i_know_about_user',
          text: 'The user likes Ao 26.',
          origin: 'saw',
          evidence: { turn: 4, quote: 'Ao 26 Vegan Food Project' },
        },
      ],
    });
    expect(out.proposed).toHaveLength(1);
    expect(out.dropped).toHaveLength(1);
    expect(await me.gate.pileCount()).toBe(1);
    expect(await me.facts.live()).toEqual([]);
  });
});

describe('memledger import-history [pglite]', () => {
  const root = mkdtempSync(join(tmpdir(), 'memledger-import-history-'));
  const db = join(root, 'db');
  const env = {
    MEMLEDGER_OWNER_PASSPHRASE: 'pw',
    MEMLEDGER_OWNER_KEY: join(root, 'owner.key'),
  };
  // commands share one kept engine on the store, as a long-running host does
  const engines = sharedEngines();
  const run = (...args: string[]) =>
    runCliCaptured([...args, '--db', db], env, { homeDir: root, engines });
  const sessions = async () => (await run('session', 'list', '--json')).stdout;
  afterAll(async () => {
    await engines.close();
    rmSync(root, { recursive: true, force: true });
  });

  beforeAll(async () => {
    expect((await run('init')).code).toBe(0);
  });

  it('imports a ChatGPT export, says what it skipped, and records nothing the second time', async () => {
    const file = join(FIXTURES, 'chatgpt-conversations.json');
    const r = await run('import-history', '--from', 'chatgpt', file);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        'imported 2 new conversation(s) and grew 0: 6 turn(s) recorded; 0 unchanged; 1 skipped',
        '  skipped 6630a1b2-0000-4000-8000-00000000c003: node missing-node is not in its mapping',
        'imported turns are history, not memory: `memledger reflect --session <id>` proposes facts from one through the gate',
        '',
      ].join('\n'),
    );
    expect(r.stderr).toBe('');
    const again = await run('import-history', '--from', 'chatgpt', file, '--json');
    expect(again.json()).toMatchObject({ sessions: 0, turns: 0, unchanged: 2 });
    const h = await run('history', '--session', CHATGPT_A, '--json');
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('Ao 26');
  });

  it('imports a Claude export, an OpenAI messages file and a Claude Code folder', async () => {
    const claude = await run(
      'import-history',
      '--from',
      'claude',
      join(FIXTURES, 'claude-conversations.json'),
      '--json',
    );
    expect(claude.json()).toMatchObject({
      sessions: 2,
      turns: 6,
      skipped: [{ conversation: 'f0c1a9e2-2222-4a4a-9b9b-000000000002' }],
    });
    const openai = await run(
      'import-history',
      '--from',
      'openai-messages',
      join(FIXTURES, 'openai-messages.jsonl'),
      '--json',
    );
    expect(openai.json()).toMatchObject({
      sessions: 2,
      turns: 4,
      skipped: [{ conversation: 'openai-messages.jsonl:2' }],
    });
    const cc = await run(
      'import-history',
      '--from',
      'claude-code',
      join(FIXTURES, 'claude-code'),
      '--json',
    );
    expect(cc.json()).toEqual({
      from: 'claude-code',
      path: join(FIXTURES, 'claude-code'),
      sessions: 1,
      grown: 0,
      turns: 4,
      unchanged: 0,
      skipped: [],
    });
    const h = await run('history', '--session', CLAUDE_CODE, '--format', 'json');
    const turns = (JSON.parse(h.stdout) as { turns: Array<Record<string, unknown>> }).turns;
    expect(turns.map((x) => [x.role, x.content, x.receipt, x.recordedAt])).toEqual([
      ['user', 'How often should I water tomatoes in July?', null, '2025-06-10T08:01:00.000Z'],
      [
        'assistant',
        'Let me look that up. Water deeply every two to three days in July.',
        tools(['WebSearch'], ['https://garden.example/tomatoes']),
        '2025-06-10T08:04:00.000Z',
      ],
      ['user', 'I grow them on a balcony in pots.', null, '2025-06-10T08:05:00.000Z'],
      ['assistant', 'Pots dry faster: check them daily.', NONE, '2025-06-10T08:06:00.000Z'],
    ]);
    const listed = JSON.parse(await sessions()) as {
      sessions: Array<{ sessionId: string; title: string; createdAt: string }>;
    };
    expect(listed.sessions.find((x) => x.sessionId === CLAUDE_CODE)).toMatchObject({
      title: 'Claude Code (/home/dana/garden)',
      createdAt: '2025-06-10T08:01:00.000Z',
    });
    expect(h.stdout).not.toContain('SUBAGENT');
    const again = await run(
      'import-history',
      '--from',
      'claude-code',
      join(FIXTURES, 'claude-code'),
      '--json',
    );
    expect(again.json()).toMatchObject({ sessions: 0, turns: 0, unchanged: 1 });
  });

  it('shows progress on a terminal’s stderr only', async () => {
    const file = join(root, 'progress.json');
    writeFileSync(file, JSON.stringify([{ role: 'user', content: 'Progress check.' }]));
    const r = await runCliCaptured(
      ['import-history', '--from', 'openai-messages', file, '--db', db, '--json'],
      env,
      { homeDir: root, stderrIsTTY: true, engines },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('importing: 1/1 conversations');
    expect(() => r.json()).not.toThrow();
  });

  it('refuses a missing file, a folder without transcripts and a file of another format, writing nothing', async () => {
    const before = await sessions();
    const cases: Array<[string, string]> = [
      ['chatgpt', join(root, 'missing.json')],
      ['chatgpt', join(FIXTURES, 'claude-conversations.json')],
      ['claude', join(FIXTURES, 'chatgpt-conversations.json')],
      ['claude', join(FIXTURES, 'openai-messages.jsonl')],
      ['openai-messages', join(FIXTURES, 'chatgpt-conversations.json')],
      ['claude-code', join(FIXTURES, 'claude-code', 'none-here')],
      ['claude-code', root],
    ];
    for (const [from, path] of cases) {
      const r = await run('import-history', '--from', from, path, '--json');
      // a usage error: exit 2
      expect([from, path, r.code, r.errorCode()]).toEqual([from, path, 2, 'INVALID_ARGUMENT']);
    }
    const bad = await run(
      'import-history',
      '--from',
      'bard',
      join(FIXTURES, 'openai-messages.json'),
    );
    expect(bad.errorCode()).toBe('INVALID_ARGUMENT');
    expect(await sessions()).toBe(before);
  });
});
