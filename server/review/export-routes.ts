import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Engine } from '../../src/index.js';
import type { RouteKit } from './route-kit.js';

/**
 * The owner's download of everything the page's subject holds: an export (docs/EXPORT.md) as one
 * tar file. A form post with the page's CSRF token, answered only while the owner key is open (as
 * a decision is), so no other site and no locked page can start one; a token never reaches it.
 */
export function exportRoutes(kit: RouteKit, engine: Engine): void {
  kit.post('/export', async (c, s) => {
    // the owner's: REVIEW_LOCKED unless this session unlocked the key
    kit.sessions.signer(s);
    const work = mkdtempSync(join(tmpdir(), 'memledger-review-export-'));
    try {
      const day = new Date().toISOString().slice(0, 10);
      const name = `memledger-${kit.subject.replace(/[^A-Za-z0-9_.-]/g, '_')}-${day}`;
      const file = join(work, `${name}.tar`);
      await engine.subjects.export(kit.subject, file);
      const bytes = readFileSync(file);
      return c.body(new Uint8Array(bytes), 200, {
        'Content-Type': 'application/x-tar',
        'Content-Disposition': `attachment; filename="${name}.tar"`,
        'Cache-Control': 'no-store',
      });
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
}
