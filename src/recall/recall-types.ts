import type { RecallItem, RecallOptions } from './recall-api.js';
import type { EmbedPendingOptions, EmbedPendingResult } from './vectors.js';

/** Recall: ranked turns and facts for a query, each with its passport. Reads only. */
export interface RecallApi {
  search(query: string, options?: RecallOptions): Promise<RecallItem[]>;
}

/** Vectors: made on demand, never by a read. */
export interface VectorsApi {
  /** Embeds the subject's turns and facts that have no vector for the embedder's model yet. */
  embedPending(options?: EmbedPendingOptions): Promise<EmbedPendingResult>;
}
