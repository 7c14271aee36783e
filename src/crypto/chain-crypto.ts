import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { ChainCrypto } from '../domain/decision-chain.js';
import { isBase64 } from './base64.js';
import { ownerKeyId } from './owner-key-format.js';

/**
 * SHA-256 and Ed25519 verification from node:crypto; `verify` returns false on malformed input.
 * Each instance keeps the last public key it parsed (a chain is verified under one key), so
 * instances share nothing.
 */
export function createNodeChainCrypto(): ChainCrypto {
  let cachedPem: string | null = null;
  let cachedKey: KeyObject | null = null;
  const publicKeyFromPem = (pem: string): KeyObject => {
    if (pem !== cachedPem || cachedKey === null) {
      cachedKey = createPublicKey(pem);
      cachedPem = pem;
    }
    return cachedKey;
  };
  return {
    sha256Hex(data: string): string {
      return createHash('sha256').update(data, 'utf8').digest('hex');
    },
    verify(publicKeyPem: string, data: string, signatureB64: string): boolean {
      try {
        if (!isBase64(signatureB64)) return false;
        const signature = Buffer.from(signatureB64, 'base64');
        if (signature.length !== 64) return false;
        const key = publicKeyFromPem(publicKeyPem);
        if (key.asymmetricKeyType !== 'ed25519') return false;
        return verify(null, Buffer.from(data, 'utf8'), key, signature);
      } catch {
        return false;
      }
    },
    keyIdOf(publicKeyPem: string): string | null {
      try {
        const key = createPublicKey(publicKeyPem);
        return key.type === 'public' && key.asymmetricKeyType === 'ed25519'
          ? ownerKeyId(key)
          : null;
      } catch {
        return null;
      }
    },
  };
}

/** One shared instance, for callers that need no cache of their own. */
export const nodeChainCrypto: ChainCrypto = createNodeChainCrypto();
