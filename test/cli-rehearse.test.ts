/**
 * Issue 38, as a new user tries it: `memledger summarize --aspect life_lately` as the README shows
 * it works on a fresh store (every subject starts with the aspect), the SLOT_NOT_FOUND suggestion
 * for another aspect is a command that runs as written, and `reflect` / `summarize --rehearse`
 * show what the gate and the check would do with the scripted fake model's answer while leaving
 * the store exactly as it was (the whole store's dump, the pile, the dropped log, the runs, the
 * summaries and the usage, compared before and after). The in-process CLI on a real PGlite store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../eval/fake-llm/fake-llm-server.js';
import { UNSUPPORTED_SENTENCE } from '../eval/fake-llm/scripted-summary.js';
import { slotDeclareCommand } from '../cli/commands/slot.js';
import { parseCommandLine } from '../cli/parse-options.js';
import { REHEARSAL_MODEL } from '../cli/rehearsal.js';
import {
  createEngine,
  DEFAULT_SLOTS,
  type Engine,
  type EngineConfig,
  type LlmClient,
} from '../src/index.js';
import { llmNotConfigured } from '../src/reflection/reflection-module.js';
import { undeclaredAspect } from '../src/reflection/summary-module.js';
import { runCliCaptured, type CliResult } from './support/cli.js';
import { dumpStore } from './support/dump-store.js';
import type { SharedEngines } from './support/shared-engines.js';

const PASS = 'correct horse battery staple';
const root = mkdtempSync(join(tmpdir(), 'memledger-cli-rehearse-'));
const db = join(root, 'store');
const ownerEnv = { MEMLEDGER_OWNER_PASSPHRASE: PASS, MEMLEDGER_OWNER_KEY: join(root, 'owner.key') };

/**
 * The CLI's engine seam with one engine kept open for the whole file, as `sharedEngines` keeps
 * one, except that a command bringing a model (--rehearse's fake, or the environment's) does not
 * get an engine of its own, which would boot the store twice per command: the kept engine's
 * model is that command's while it runs, and none otherwise (LLM_NOT_CONFIGURED when called).
 */
function oneEngine(): SharedEngines {
  let engine: Engine | undefined;
  let model: LlmClient | undefined;
  let anchor: EngineConfig['anchor'];
  const llm: LlmClient = {
    get provider() {
      return model?.provider ?? 'openai';
    },
    get model() {
      return model?.model ?? '';
    },
    get url() {
      return model?.url ?? '';
    },
    generate(request) {
      if (model === undefined) throw llmNotConfigured();
      return model.generate(request);
    },
  };
  return {
    async open(config) {
      anchor = config.anchor;
      model = config.llm;
      engine ??= await createEngine({
        ...config,
        llm,
        shared: false,
        anchor: (subject) => anchor?.(subject) ?? null,
      });
      return {
        engine,
        release: async () => {
          model = undefined;
        },
      };
    },
    engineFor: () => engine,
    async close() {
      await engine?.close();
      engine = undefined;
    },
  };
}
const engines = oneEngine();

/** A model of the user's own, named in the environment: a rehearsal must never call it. */
let theirs: FakeLlm;
let modelEnv: Record<string, string> = {};
let session = '';

const run = (args: string[], env: Record<string, string> = ownerEnv): Promise<CliResult> =>
  runCliCaptured([...args, '--db', db], env, { engines });

async function ok<T>(args: string[], env?: Record<string, string>): Promise<T> {
  const r = await run([...args, '--json'], env);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.json() as T;
}

/** Everything a rehearsal could have written: every table of the store, and what the CLI shows. */
async function snapshot() {
  const shown = {
    pile: (await ok<{ pending: unknown[] }>(['pile'])).pending.length,
    dropped: (await ok<{ dropped: unknown[] }>(['dropped'])).dropped.length,
    runs: (await ok<{ runs: unknown[] }>(['reflect', 'list'])).runs.length,
    summaries: (await ok<{ summaries: unknown[] }>(['summarize', 'list'])).summaries.length,
    usage: await ok(['usage', '--session', session]),
  };
  const engine = engines.engineFor(db);
  if (engine === undefined) throw new Error('no command kept the store open');
  return { shown, tables: await dumpStore(engine) };
}

beforeAll(async () => {
  theirs = await startFakeLlm({ protocol: 'openai', model: 'their-model' });
  modelEnv = { ...ownerEnv, MEMLEDGER_LLM_URL: theirs.url, MEMLEDGER_LLM_MODEL: 'their-model' };
  expect((await run(['init', '--json'])).code).toBe(0);
  session = (await ok<{ sessionId: string }>(['session', 'new'])).sessionId;
  for (const [role, text] of [
    ['user', 'I moved to Porto last spring. What did we decide about the vendor contract?'],
    [
      'assistant',
      "I don't have any record of a conversation about the vendor contract. Do you remember roughly when we talked about it?",
    ],
    ['user', 'I have been sleeping badly since the move.'],
  ] as const) {
    await ok(['turn', 'add', '--session', session, '--role', role, '--text', text]);
  }
});
afterAll(async () => {
  await theirs.close();
  await engines.close();
  rmSync(root, { recursive: true, force: true });
});

describe('memledger reflect --rehearse', () => {
  it('shows the gate’s verdicts on the fake model’s proposals, and the store is exactly as it was', async () => {
    const before = await snapshot();
    // the environment names a model of the user's: a rehearsal does not call it
    const r = await run(['reflect', '--session', session, '--rehearse', '--json'], modelEnv);
    expect(r.code, r.stderr).toBe(0);
    const out = r.json() as {
      rehearsal: boolean;
      stored: boolean;
      reflection: { model: string; proposed: number; dropped: number; id?: string };
      proposed: Array<{ slot: string; text: string; id?: string }>;
      dropped: Array<{ code: string }>;
    };
    expect(out).toMatchObject({ rehearsal: true, stored: false });
    expect(out.reflection.model).toBe(REHEARSAL_MODEL);
    expect(out.reflection.id).toBeUndefined();
    expect(out.proposed.length).toBeGreaterThan(0);
    expect(out.proposed.every((p) => p.id === undefined)).toBe(true);
    expect(out.dropped.length).toBeGreaterThan(0);
    expect(out.reflection.proposed).toBe(out.proposed.length + out.dropped.length);
    expect(new Set(out.dropped.map((d) => d.code)).size).toBeGreaterThan(1);
    expect(theirs.requests).toHaveLength(0);

    const text = await run(['reflect', '--session', session, '--rehearse']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split('\n')[0]).toMatch(/^REHEARSAL: .*nothing was stored$/);
    for (const d of out.dropped) expect(text.stdout).toContain(`WOULD BE DROPPED ${d.code} `);
    for (const p of out.proposed) {
      expect(text.stdout).toContain(`WOULD REACH THE PILE ${p.slot}: ${p.text}`);
    }
    expect(text.stdout).not.toMatch(/^PROPOSED /m);

    // the negative control: nothing of either rehearsal is in the store
    expect(await snapshot()).toEqual(before);

    // and the same run for real writes exactly what the rehearsal said it would
    const real = await ok<{ proposed: Array<{ slot: string; text: string }>; dropped: unknown[] }>(
      ['reflect', '--session', session],
      modelEnv,
    );
    expect(theirs.requests).toHaveLength(1);
    const after = await snapshot();
    expect(after.tables).not.toEqual(before.tables);
    expect(after.shown).toMatchObject({ pile: out.proposed.length, dropped: out.dropped.length });
    expect(real.proposed.map((p) => [p.slot, p.text])).toEqual(
      out.proposed.map((p) => [p.slot, p.text]),
    );
  });

  it('--rehearse with --llm-url (or another --llm-* flag) is a usage error that calls nothing', async () => {
    const before = await snapshot();
    for (const extra of [
      ['--llm-url', theirs.url, '--llm-model', 'their-model'],
      ['--llm-model', 'their-model'],
    ]) {
      for (const command of [
        ['reflect', '--session', session],
        ['summarize', '--aspect', 'life_lately'],
      ]) {
        const r = await run([...command, '--rehearse', ...extra, '--json']);
        expect(r.code).toBe(2);
        expect(r.errorCode()).toBe('INVALID_ARGUMENT');
        expect(r.stderr).toContain('--rehearse');
      }
    }
    expect(theirs.requests).toHaveLength(1);
    expect(await snapshot()).toEqual(before);
  });
});

describe('memledger summarize', () => {
  it('--rehearse shows every sentence’s verdict, and the store is exactly as it was', async () => {
    const before = await snapshot();
    const r = await run(['summarize', '--aspect', 'life_lately', '--rehearse', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = r.json() as {
      rehearsal: boolean;
      stored: boolean;
      wouldReachPile: boolean;
      model: string;
      id?: string;
      factId?: string;
      sentences: Array<{ text: string; verdict: string }>;
    };
    expect(out).toMatchObject({ rehearsal: true, stored: false, model: REHEARSAL_MODEL });
    expect(out.id).toBeUndefined();
    expect(out.factId).toBeUndefined();
    expect(out.sentences.find((s) => s.text === UNSUPPORTED_SENTENCE)?.verdict).toBe('unattested');
    expect(out.sentences.some((s) => s.verdict === 'turn_not_found')).toBe(true);
    expect(out.wouldReachPile).toBe(out.sentences.some((s) => s.verdict === 'supported'));

    const text = await run(['summarize', '--aspect', 'life_lately', '--rehearse']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split('\n')[0]).toMatch(/^REHEARSAL: /);
    expect(text.stdout).toContain(`LEFT OUT unattested ${UNSUPPORTED_SENTENCE}`);
    expect(text.stdout).not.toMatch(/^PROPOSED /m);
    expect(await snapshot()).toEqual(before);
  });

  it('the README’s `memledger summarize --aspect life_lately` works on a fresh store', async () => {
    expect(DEFAULT_SLOTS.find((s) => s.name === 'life_lately')).toMatchObject({
      rule: 'summary',
      scope: 'rolling',
    });
    const before = await snapshot();
    const r = await run(['summarize', '--aspect', 'life_lately'], modelEnv);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^summary \S+ of life_lately /);
    // for real, it writes: the summary is listed, and the dump differs
    const after = await snapshot();
    expect(after.shown.summaries).toBe(before.shown.summaries + 1);
    expect(after.tables).not.toEqual(before.tables);
  });

  it('an undeclared aspect’s error suggests a command that runs as written', async () => {
    // the aspect is looked up before the model is needed
    const r = await run(['summarize', '--aspect', 'presence', '--json']);
    expect(r.errorCode()).toBe('SLOT_NOT_FOUND');
    const message = (JSON.parse(r.stderr) as { error: { message: string } }).error.message;
    const suggested = /\((memledger [^)]*)\)/.exec(message)?.[1];
    expect(suggested).toBe('memledger slot declare --name presence --rule summary');
    const declared = await run([...(suggested as string).split(' ').slice(1), '--json']);
    expect(declared.code, declared.stderr).toBe(0);
    expect(declared.json()).toMatchObject({ name: 'presence', rule: 'summary', scope: 'rolling' });
    // the aspect is found now: what stops this summary is the missing model, no longer the aspect
    const found = await run(['summarize', '--aspect', 'presence', '--json']);
    expect(found.errorCode()).toBe('LLM_NOT_CONFIGURED');
    // whose own suggestion runs as written too
    expect(found.stderr).toContain('add --rehearse');
    const rehearsed = await run(['summarize', '--aspect', 'presence', '--rehearse', '--json']);
    expect(rehearsed.code, rehearsed.stderr).toBe(0);
    expect(rehearsed.json()).toMatchObject({ rehearsal: true, aspect: 'presence' });
  });

  it('for another subject the suggestion names it; a name no slot may have gets no command', () => {
    const message = undeclaredAspect('bob', 'presence');
    const words = /\(memledger ([^)]*)\)/.exec(message)?.[1]?.split(' ') ?? [];
    expect(words.slice(0, 2)).toEqual(['slot', 'declare']);
    // the CLI's own parser reads it as the declaration it means
    const parsed = parseCommandLine(words.slice(2), slotDeclareCommand.options, false);
    expect(parsed.values).toMatchObject({ name: 'presence', rule: 'summary', subject: 'bob' });
    expect(parsed.positionals).toEqual([]);

    const bad = undeclaredAspect('owner', 'Life Lately; rm -rf');
    expect(bad).not.toContain('memledger');
    expect(bad).toContain('a-z, 0-9 and _');
  });
});
