import { z } from '@hono/zod-openapi';
import { PROBE_KINDS, type Engine } from '../../src/index.js';
import { CalibrationSummary, ProbeRecord } from './entities.js';
import { ProbeSpecIn } from './probe-spec.js';
import { apiRoute, enginePage, exact, jsonResponse, send, type HttpApp } from './route-kit.js';
import { InstrumentName, PageInfo, pageQuery, text } from './schemas.js';

const RunBody = z.strictObject({
  spec: ProbeSpecIn,
  purpose: text().optional(),
  instrument: InstrumentName.optional().openapi({ description: 'a host instrument of this kind' }),
});

const CalibrateBody = z.strictObject({ instrument: InstrumentName.optional() });

export function registerProbeRoutes(app: HttpApp, engine: Engine): void {
  app.openapi(
    apiRoute(engine, 'probes.run', {
      request: {
        body: { required: true, content: { 'application/json': { schema: RunBody } } },
      },
      responses: jsonResponse(ProbeRecord, 'the probe record, with its verdict'),
    }),
    async (c) => {
      const { spec, ...options } = exact(c.req.valid('json'));
      const record = await c.var.caller.handle.probes.run(spec, options);
      return c.json(send(ProbeRecord, record), 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'probes.calibrate', {
      request: {
        body: { required: false, content: { 'application/json': { schema: CalibrateBody } } },
      },
      responses: jsonResponse(
        z.object({ calibrations: z.array(CalibrationSummary) }),
        'one summary per instrument',
      ),
    }),
    async (c) => {
      const summaries = await c.var.caller.handle.probes.calibrate(exact(c.req.valid('json')));
      return c.json({ calibrations: send(z.array(CalibrationSummary), summaries) }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'probes.log', {
      request: { query: z.strictObject({ kind: z.enum(PROBE_KINDS).optional(), ...pageQuery }) },
      responses: jsonResponse(
        z.object({ records: z.array(ProbeRecord), page: PageInfo }),
        'a page of probe records',
      ),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { items, page } = await enginePage(q, (p) =>
        c.var.caller.handle.probes.log({ ...p, ...(q.kind === undefined ? {} : { kind: q.kind }) }),
      );
      return c.json({ records: send(z.array(ProbeRecord), items), page }, 200);
    },
  );
}
