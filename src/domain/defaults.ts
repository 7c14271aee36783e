// Defaults a face names before it opens an engine (the CLI's --db and --subject), here so that
// reading one loads no engine (src/engine.ts and src/store/open-store.ts export them from here).

/** The store a CLI command opens when neither --db nor MEMLEDGER_DB names one. */
export const DEFAULT_DB = './.memledger';

/** The subject a handle reads when no id is given. */
export const DEFAULT_SUBJECT = 'owner';
