// A token holder could ask a file probe whether any file under the server's working directory (its .env, the store's own data files) contains a needle: the servers' file probes now read no directory unless the owner names one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.js';

const MAIN = resolve(import.meta.dirname, '../../../dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'ml-probe-roots-'));
const db = join(dir, 'store');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function probeSecret(
  extra: string[],
): Promise<{ verdict: string; errorCode: string | null }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, 'mcp', '--db', db, '--subject', 'owner', ...extra],
    cwd: dir,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'probe-roots', version: '1.0.0' });
  await client.connect(transport);
  try {
    const r = await client.callTool({
      name: 'run_probe',
      arguments: {
        spec: { kind: 'file', path: 'secret.env', mode: 'contains', needle: 'hunter2' },
      },
    });
    expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
    return (r.structuredContent as { record: { verdict: string; errorCode: string | null } })
      .record;
  } finally {
    await client.close();
  }
}

describe('the servers\u2019 file probes', () => {
  beforeAll(async () => {
    writeFileSync(join(dir, 'secret.env'), 'PASSWORD=hunter2\n');
    const engine = await createEngine({ db });
    await engine.subjects.create('owner');
    await engine.close();
  });

  it('read nothing under the working directory by default', async () => {
    const r = await probeSecret([]);
    expect(r.verdict).not.toBe('verified');
    expect(r.errorCode).toBe('PATH_OUTSIDE_ROOTS');
  });

  it('read a directory the owner names with --root (positive control)', async () => {
    expect((await probeSecret(['--root', dir])).verdict).toBe('verified');
  });
});
