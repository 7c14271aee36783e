import { EngineError } from '../../src/domain/errors.js';
import type { Engine } from '../../src/index.js';
import { callerForToken, localCaller, type Caller } from '../../server/access.js';
import { defineCommand } from '../command.js';
import { KEY_ID_OPTION, KEY_OPTIONS } from '../owner-key-options.js';
import { PROBE_CONFIG_OPTIONS, probeConfig } from '../probe-options.js';
import { untilSignal } from './serve.js';
import { readTokenFile } from '../token-file.js';

/** Resolves when stdin ends: the client has gone. */
function untilStdinEnds(): Promise<void> {
  return new Promise((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
}

/** Until the session ends, console output that is not the protocol goes to stderr. */
function keepStdoutForProtocol(): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  return () => Object.assign(console, saved);
}

async function callerFor(
  engine: Engine,
  token: string | undefined,
  subject: string | undefined,
): Promise<{ caller: Caller; recheck?: () => Promise<void> }> {
  if (token === undefined) return { caller: await localCaller(engine, subject ?? 'owner') };
  const caller = await callerForToken(engine, token);
  // A connection lives for hours: a token revoked meanwhile stops at its next request.
  const recheck = async () => {
    const info = await engine.tokens.authenticate(token);
    if (info.id !== caller.tokenId) {
      throw new EngineError(
        'TOKEN_INVALID',
        'this token is no longer the one this connection opened with',
      );
    }
  };
  return { caller, recheck };
}

/** `memledger mcp`: MCP over stdio for a desktop client. Stdout carries the protocol only. */
export const mcpCommand = defineCommand({
  path: ['mcp'],
  summary: 'Serves MCP over stdio for a desktop client, as one token’s subject and role.',
  options: {
    'token-file': { kind: 'text', value: 'F', help: 'a file holding an agent or reader token' },
    subject: {
      kind: 'text',
      value: 'S',
      help: 'no token: act as the agent of subject S of this local store (the owner’s own desktop)',
    },
    key: KEY_OPTIONS.key,
    ...KEY_ID_OPTION,
    ...PROBE_CONFIG_OPTIONS,
  },
  notes: [
    'File probes read only the --root directories ($MEMLEDGER_PROBE_ROOTS); none by default, so a token holder reads no file the owner did not name.',
    'Give exactly one of --token-file and --subject.',
    'Stdout is the MCP protocol; messages go to stderr. Ends when stdin closes, or on SIGINT/SIGTERM.',
  ],
  async run(ctx) {
    const file = ctx.values['token-file'];
    const { subject } = ctx.values;
    if ((file === undefined) === (subject === undefined)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        'give exactly one of --token-file F and --subject S',
        {
          data: { field: 'token-file' },
        },
      );
    }
    const token = file === undefined ? undefined : await readTokenFile(ctx.io, file);
    await ctx.withEngine(
      false,
      async (engine) => {
        const { caller, recheck } = await callerFor(engine, token, subject);
        const restore = keepStdoutForProtocol();
        const onInternalError = (err: unknown) => {
          const what = err instanceof Error ? (err.stack ?? err.message) : String(err);
          ctx.io.stderr(`memledger mcp: ${what}\n`);
        };
        // loaded here, not at start-up: every other command (a hook after each reply) skips the SDK
        const [{ serveMcpStdio }, { createMcpServer }] = await Promise.all([
          import('../../server/mcp/mcp-stdio.js'),
          import('../../server/mcp/mcp-server.js'),
        ]);
        const handle = serveMcpStdio(
          () => createMcpServer(caller, { ...(recheck ? { recheck } : {}), onInternalError }),
          { onerror: onInternalError },
        );
        try {
          await Promise.race([untilStdinEnds(), untilSignal()]);
        } finally {
          await handle.close();
          restore();
        }
      },
      // a session's server reads many times: its own verifier, warm after the first read
      { probes: probeConfig(ctx, 'none'), longLived: true },
    );
  },
});
