import { z } from '@hono/zod-openapi';
import type { Engine } from '../../src/index.js';
import { ReflectionOutcome, ReflectionRun, ReflectResult, Summary } from './entities.js';
import { apiRoute, DEFAULT_PAGE, exact, jsonResponse, send, type HttpApp } from './route-kit.js';
import { ErrorBody, Id, idParam, LIMITS, PageInfo, pageQuery, text } from './schemas.js';

const failure = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorBody } },
});

const seq = z.number().int().min(1).max(LIMITS.maxInt);

/** Which turns the model is shown (seq, inclusive); none: the whole session. */
const ReflectBody = z.strictObject({
  from: seq.optional().openapi({ description: 'only turns from this seq on' }),
  to: seq.optional().openapi({ description: 'only turns up to this seq' }),
});

const SlotName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/)
  .openapi({ description: 'a summary aspect: a slot declared with rule summary' });

/** Which aspect, and which session's turns (none: the subject's newest session). */
const SummarizeBody = z.strictObject({
  aspect: SlotName,
  sessionId: Id.optional().openapi({ description: 'default: the newest session' }),
});

export function registerReflectionRoutes(app: HttpApp, engine: Engine): void {
  app.openapi(
    apiRoute(engine, 'reflection.reflect', {
      description:
        'Nothing becomes live: what passes the gate waits in the pile for an owner decision. LLM_NOT_CONFIGURED (503) when the server has no model; LLM_FAILED (502) when the call or its answer fails, and then nothing is written.',
      request: {
        params: idParam('sessionId'),
        body: { required: false, content: { 'application/json': { schema: ReflectBody } } },
      },
      responses: {
        ...jsonResponse(ReflectResult, 'the run, what went to the pile, and what was dropped'),
        502: failure('the model call failed (LLM_FAILED; the detail stays in the server log)'),
        503: failure('this server has no model configured (LLM_NOT_CONFIGURED)'),
      },
    }),
    async (c) => {
      const { sessionId } = c.req.valid('param');
      const range = exact(c.req.valid('json'));
      const result = await c.var.caller.handle.reflection.reflect({ sessionId, ...range });
      return c.json(send(ReflectResult, result), 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'reflection.list', {
      request: { query: z.strictObject({ sessionId: Id.optional(), ...pageQuery }) },
      responses: jsonResponse(
        z.object({ runs: z.array(ReflectionRun), page: PageInfo }),
        'a page of runs',
      ),
    }),
    async (c) => {
      // paged in the store: one more than the page says whether another follows
      const { sessionId, ...q } = c.req.valid('query');
      const limit = q.limit ?? DEFAULT_PAGE;
      const offset = q.offset ?? 0;
      const runs = await c.var.caller.handle.reflection.list({
        ...(sessionId === undefined ? {} : { sessionId }),
        limit: limit + 1,
        offset,
      });
      const nextOffset = runs.length > limit ? offset + limit : null;
      const page = { limit, offset, nextOffset, truncated: false };
      return c.json({ runs: send(z.array(ReflectionRun), runs.slice(0, limit)), page }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'reflection.outcomes', {
      request: {
        query: z.strictObject({
          promptVersion: text(128).min(1).optional().openapi({
            description: 'only this prompt version (`reflect-` and 12 hex digits)',
          }),
        }),
      },
      responses: jsonResponse(
        z.object({ outcomes: z.array(ReflectionOutcome) }),
        'the outcomes, one per prompt version and slot',
      ),
    }),
    async (c) => {
      const { promptVersion } = c.req.valid('query');
      const outcomes = await c.var.caller.handle.reflection.outcomes(
        promptVersion === undefined ? {} : { promptVersion },
      );
      return c.json({ outcomes: send(z.array(ReflectionOutcome), outcomes) }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'summaries.summarize', {
      description:
        'Nothing becomes live: the supported sentences wait in the pile as one summarized fact for an owner decision. SLOT_NOT_FOUND when the aspect is not a declared summary aspect; LLM_NOT_CONFIGURED (503) when the server has no model; LLM_FAILED (502) when the call or its answer fails, and then nothing is written.',
      request: {
        body: { required: true, content: { 'application/json': { schema: SummarizeBody } } },
      },
      responses: {
        ...jsonResponse(
          Summary,
          'the summary: every sentence with its verdict, and the fact in the pile',
        ),
        502: failure('the model call failed (LLM_FAILED; the detail stays in the server log)'),
        503: failure('this server has no model configured (LLM_NOT_CONFIGURED)'),
      },
    }),
    async (c) => {
      const input = exact(c.req.valid('json'));
      const result = await c.var.caller.handle.summaries.summarize(input);
      return c.json(send(Summary, result), 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'summaries.list', {
      request: { query: z.strictObject({ aspect: SlotName.optional(), ...pageQuery }) },
      responses: jsonResponse(
        z.object({ summaries: z.array(Summary), page: PageInfo }),
        'a page of summaries',
      ),
    }),
    async (c) => {
      const { aspect, ...q } = c.req.valid('query');
      const limit = q.limit ?? DEFAULT_PAGE;
      const offset = q.offset ?? 0;
      const list = await c.var.caller.handle.summaries.list({
        ...(aspect === undefined ? {} : { aspect }),
        limit: limit + 1,
        offset,
      });
      const nextOffset = list.length > limit ? offset + limit : null;
      const page = { limit, offset, nextOffset, truncated: false };
      return c.json({ summaries: send(z.array(Summary), list.slice(0, limit)), page }, 200);
    },
  );
}
