/**
 * Ids the API hands out, branded where one could be passed for another: a fact's (a proposal is a
 * fact waiting for review, so its id is one too) and a retraction's, which meet in the ledger
 * (`retract({ factId })`, `settle({ retractionId })`, a fact's `retractionId`). At run time each is
 * the plain string the store gave; the brand exists only for the type checker, so
 * `ledger.settle({ retractionId: fact.id, … })` does not compile. An id read from elsewhere (a
 * URL, a file, a command line) is cast (`id as FactId`); the engine checks it exists all the same.
 */
declare const BRAND: unique symbol;

/** A fact's id, or a proposal's (a pending fact). */
export type FactId = string & { readonly [BRAND]: 'FactId' };
/** A retraction's id. */
export type RetractionId = string & { readonly [BRAND]: 'RetractionId' };
