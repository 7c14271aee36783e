// What an AI SDK user installs: the packed package and `ai`, nothing else. The example
// examples/ai-sdk-chat.ts type-checks against it and runs on the SDK's scripted test model, and
// none of the other frameworks memledger has adapters for comes with it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedProject, ROOT, run, TSC } from '../support/packed.js';

const OTHER_FRAMEWORKS = [
  '@openai/agents',
  'openai',
  '@langchain/langgraph',
  '@langchain/core',
  '@anthropic-ai/sdk',
  '@anthropic-ai/claude-agent-sdk',
];

describe('the packed package with only the AI SDK beside it', () => {
  let dir: string;

  beforeAll(() => {
    expect(existsSync(join(ROOT, 'dist', 'adapters', 'ai-sdk.js'))).toBe(true);
    const ours = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    ({ dir } = packedProject({
      prefix: 'memledger-ai-sdk-pack-',
      also: [`ai@${ours.devDependencies.ai}`],
      example: 'ai-sdk-chat.ts',
      file: 'ai-sdk-chat.ts',
      // the AI SDK's own declarations do not compile under exactOptionalPropertyTypes: as in a
      // project `tsc --init` makes, libraries' declarations are not checked; the example is
      skipLibCheck: true,
    }));
  }, 300_000);
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('pulls in none of the other frameworks', () => {
    const present = OTHER_FRAMEWORKS.filter((p) => existsSync(join(dir, 'node_modules', p)));
    expect(present).toEqual([]);
    // negative control: the check sees what is there
    expect(existsSync(join(dir, 'node_modules', 'ai'))).toBe(true);
  });

  it('type-checks and runs examples/ai-sdk-chat.ts on the scripted model', () => {
    run(process.execPath, [TSC, '-p', 'tsconfig.json'], dir);
    const env = { ...process.env };
    delete env.AI_GATEWAY_API_KEY;
    const out = JSON.parse(
      execFileSync(process.execPath, [join(dir, 'out', 'ai-sdk-chat.js')], {
        cwd: dir,
        env,
        encoding: 'utf8',
      }),
    ) as Record<string, unknown>;
    expect(out).toMatchObject({
      scripted: true,
      proposed: ['The user is allergic to peanuts.'],
      dropped: ['QUOTE_NOT_FOUND'],
      approved: ['The user is allergic to peanuts.'],
      live: ['The user is allergic to peanuts.'],
      turns: [
        { role: 'user', receipt: null },
        { role: 'assistant', receipt: 'tools' },
        { role: 'user', receipt: null },
        { role: 'assistant', receipt: 'none' },
      ],
      receiptTools: ['propose_memories'],
    });
    expect(out.sources).toEqual([expect.stringContaining('The user is allergic to peanuts.')]);
  });

  it('exposes the adapter subpaths, and no deep import', () => {
    const probe = join(dir, 'deep.mjs');
    writeFileSync(probe, "await import('memledger/dist/adapters/agent-memory.js');\n");
    expect(() => run(process.execPath, [probe], dir)).toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
    const ok = join(dir, 'ok.mjs');
    writeFileSync(
      ok,
      "const m = await import('memledger/ai-sdk'); console.log(typeof m.memledgerMiddleware);\n",
    );
    expect(run(process.execPath, [ok], dir).trim()).toBe('function');
  });
});
