import { nodeChainCrypto } from '../../src/crypto/chain-crypto.js';
import { rememberingVerifier, type ChainCrypto } from '../../src/domain/decision-chain.js';
import type { LaunchHost } from '../../src/pglite/host-launch.js';
import { StoreHost } from '../../src/pglite/store-host.js';
import { embeddedTemplate } from '../../src/store/embedded-template.js';
import { createHostViews } from '../../src/trust/host-views.js';

/**
 * Starts store hosts in this process, as the built CLI starts a detached one
 * (src/pglite/host-main.ts), keeping trust views with `crypto` (the engine's by default); each
 * host started is pushed onto `hosts`, for the test to stop.
 */
export function inProcessHosts(
  hosts: StoreHost[],
  crypto: ChainCrypto = rememberingVerifier(nodeChainCrypto),
): LaunchHost {
  return async (dir, create, idleMs) => {
    const template = embeddedTemplate();
    hosts.push(
      await StoreHost.start({
        dir,
        create,
        ...(idleMs === undefined ? {} : { idleMs }),
        ...(template === undefined ? {} : { template }),
        views: (client) => createHostViews({ client, crypto }),
      }),
    );
  };
}
