// Dates under the process's own time zone: the built `memledger` run with TZ set renders a due
// date as written (the TZ of a process cannot change inside this one).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILT_CLI } from '../support/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'memledger-tz-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('dates under the process zone [pglite]', () => {
  const run = (tz: string, db: string, args: string[]) =>
    spawnSync(process.execPath, [BUILT_CLI, ...args, '--db', db, '--json'], {
      encoding: 'utf8',
      env: {
        ...process.env,
        TZ: tz,
        MEMLEDGER_OWNER_PASSPHRASE: 'pw',
        MEMLEDGER_OWNER_KEY: join(db, '..', `${tz.replace('/', '-')}.key`),
      },
    });

  it.each(['Europe/Stockholm', 'America/Los_Angeles'])(
    'renders due 2026-10-22 as 2026-10-22 under TZ=%s',
    (tz) => {
      const db = join(tmp, `tz-${tz.replace('/', '-')}`);
      expect(run(tz, db, ['init']).status).toBe(0);
      expect(
        run(tz, db, ['commitment', 'add', '--title', 'file the report', '--due', '2026-10-22'])
          .status,
      ).toBe(0);
      const list = JSON.parse(run(tz, db, ['commitment', 'list']).stdout) as {
        commitments: Array<{ due: string }>;
      };
      expect(list.commitments[0]?.due).toBe('2026-10-22');
      const out = run(tz, db, [
        'arrival',
        '--surface',
        'chat',
        '--subject',
        'owner',
        '--format',
        'json',
      ]);
      expect(out.status).toBe(0);
      const doc = JSON.parse(out.stdout) as { blocks: Array<{ name: string; text: string }> };
      expect(doc.blocks.find((b) => b.name === 'settled_facts')?.text).toContain(
        '"file the report" (due 2026-10-22)',
      );
      expect(doc.blocks.find((b) => b.name === 'current_time')?.text).toContain(tz);
    },
  );
});
