/**
 * Where `memledger serve` listens unless told otherwise: loopback only. This file imports
 * nothing, so the CLI can name the defaults without loading the servers.
 */
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 7777;
