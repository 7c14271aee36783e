import { createTokensModule } from '../access/access-tokens.js';
import { createArrivalModule, type ArrivalConfig } from '../arrival/arrival-module.js';
import { nodeChainCrypto } from '../crypto/chain-crypto.js';
import { rememberingVerifier } from '../domain/decision-chain.js';
import { createGateModule } from '../gate/gate-module.js';
import { createTrust } from '../trust/trust.js';
import type { AnchorSource } from '../trust/trust-verifier.js';
import type { GateConfig } from '../gate/proposal-gate.js';
import { createHistoryModule } from '../history/history-module.js';
import { createLedgerModule } from '../ledger/retraction-ledger.js';
import type { ResolvedProbeConfig } from '../probes/probe-config.js';
import { createProbeModule } from '../probes/probe-service.js';
import type { Embedder } from '../recall/embedder.js';
import { createRecallModule } from '../recall/recall-api.js';
import type { LlmClient } from '../reflection/llm-client.js';
import { createReflectionModule } from '../reflection/reflection-module.js';
import { createSummaryModule } from '../reflection/summary-module.js';
import { recallMaintenance } from '../store/recall-maintenance.js';
import type { ModuleDeps } from '../store/module-deps.js';

/** The engine's modules, each created once and handing out subject-bound APIs. */
export type EngineModules = ReturnType<typeof createModules>;

export interface ModulesConfig {
  gate?: Partial<GateConfig>;
  probes: ResolvedProbeConfig;
  dueDays?: number;
  arrival?: ArrivalConfig;
  embedder?: Embedder;
  llm?: LlmClient;
  anchor?: AnchorSource;
  /** Reads ask the store's host for trust views (EngineConfig.shared.hostViews). */
  hostViews?: boolean;
}

export function createModules(
  base: ModuleDeps & { storeId: string; assertOpen(): void },
  config: ModulesConfig,
) {
  const { client } = base;
  // one remembering verifier per engine: reads and decisions never check a signature twice
  const crypto = rememberingVerifier(nodeChainCrypto);
  const { anchor } = config;
  const hostView = config.hostViews === true ? client.hostView?.bind(client) : undefined;
  const trust = createTrust({
    ...base,
    crypto,
    ...(anchor === undefined ? {} : { anchor }),
    // the shared store's host keeps each subject's view between this and other processes (a
    // process that reads a few times and exits); else this engine keeps its own
    ...(hostView === undefined
      ? {}
      : {
          remoteView: (subjectId: string) =>
            hostView({
              subjectId,
              storeId: base.storeId,
              anchor: anchor?.(subjectId) ?? null,
              now: base.clock().getTime(),
            }),
        }),
  });
  // every module is built from these: writers tell trust what they wrote through its one hook
  const deps: ModuleDeps & { storeId: string } = {
    ...base,
    wroteNeutral: (xid) => trust.wroteNeutral(xid),
  };
  const probes = createProbeModule({ ...deps, config: config.probes });
  const recall = createRecallModule({
    client,
    trust,
    ...(config.embedder === undefined ? {} : { embedder: config.embedder }),
  });
  const arrival = createArrivalModule({
    ...deps,
    trust,
    sha256Hex: nodeChainCrypto.sha256Hex,
    // the `relevant` block: recall's bounded, read-only search (turns, and the arrival's
    // verified live facts), k at a time
    recall: (subjectId, query, options) => recall.relevant(subjectId, query, options),
    ...(config.arrival === undefined ? {} : { config: config.arrival }),
  });
  const history = createHistoryModule({
    ...deps,
    ...(client.capabilities.autovacuum ? {} : { afterInsert: recallMaintenance(client) }),
  });
  const gate = createGateModule({
    ...deps,
    crypto,
    trust,
    timeZoneOf: arrival.timeZoneOf,
    ...(config.gate === undefined ? {} : { config: config.gate }),
  });
  return {
    crypto,
    history,
    trust,
    gate,
    reflection: createReflectionModule({
      ...deps,
      gate: gate.proposalGate,
      trust,
      turns: (subjectId, sessionId, options) =>
        history.history(subjectId).turns(sessionId, options),
      ...(config.llm === undefined ? {} : { llm: config.llm }),
    }),
    summaries: createSummaryModule({
      ...deps,
      trust,
      ...(config.gate?.failureCues === undefined ? {} : { failureCues: config.gate.failureCues }),
      turns: (subjectId, sessionId, options) =>
        history.history(subjectId).turns(sessionId, options),
      ...(config.llm === undefined ? {} : { llm: config.llm }),
    }),
    probes,
    ledger: createLedgerModule({
      ...deps,
      probes: probes.falsifiers,
      signRetraction: (input) => gate.signRetraction(input),
      ...(config.dueDays === undefined ? {} : { dueDays: config.dueDays }),
    }),
    arrival,
    recall,
    tokens: createTokensModule({
      client,
      clock: base.clock,
      newId: base.newId,
      crypto,
      storeId: base.storeId,
      assertOpen: () => base.assertOpen(),
      revokeOnChain: (input) => gate.revokeToken(input),
      verifiedRevocations: async (subjectId) =>
        (await trust.withSubject(subjectId, (held) => held.chain(client))).revokedTokens,
      ...(config.anchor === undefined ? {} : { anchor: config.anchor }),
    }),
  };
}
