import type { TrustReader } from '../trust/trust-types.js';
import type { ModuleDeps } from '../store/module-deps.js';
import { createActionsApi } from './actions-api.js';
import { createArrivalApi } from './arrival-api.js';
import type {
  ActionsApi,
  ArrivalApi,
  ArrivalConfig,
  CommitmentsApi,
  ToolsApi,
} from './arrival-types.js';
import { createCommitmentsApi } from './commitments-api.js';
import type { HostBlockDef } from './host-blocks.js';
import type { ArrivalRecall } from './relevant-memories.js';
import { createToolsApi } from './tools-api.js';

/** The arrival result and configuration, beside the module that takes and gives them. */
export type { Arrival, ArrivalConfig } from './arrival-types.js';

/** What the arrival module is built from. */
export interface ArrivalModuleDeps extends ModuleDeps {
  /** SHA-256 of a block's text, hex (recorded in the manifest). */
  readonly sha256Hex: (text: string) => string;
  readonly trust: TrustReader;
  /** Recall's bounded search, which the `relevant` block reads through (arrival imports no recall). */
  readonly recall: ArrivalRecall;
  readonly config?: ArrivalConfig;
}

/** Arrival and its ground truth (tools, commitments, actions), each bound to one subject. */
export interface ArrivalModule {
  arrival(subjectId: string): ArrivalApi;
  tools(subjectId: string): ToolsApi;
  commitments(subjectId: string): CommitmentsApi;
  actions(subjectId: string): ActionsApi;
  /** Adds a host block to every subject's arrivals; BLOCK_EXISTS when its name is taken. */
  addBlock(def: HostBlockDef): void;
  /** A subject's time zone (the engine's default when it has none), for other modules' dates. */
  timeZoneOf(subjectId: string): Promise<string>;
}

/** Created once per engine; the engine checks each subject exists before these run. */
export function createArrivalModule(deps: ArrivalModuleDeps): ArrivalModule {
  const assembler = createArrivalApi(deps);
  return {
    arrival: assembler.forSubject,
    tools: createToolsApi(deps),
    commitments: createCommitmentsApi(deps),
    actions: createActionsApi(deps),
    addBlock: assembler.addBlock,
    timeZoneOf: assembler.timeZoneOf,
  };
}
