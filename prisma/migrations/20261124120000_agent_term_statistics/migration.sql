-- Per-agent BM25 (issue 10): FTS5's bm25() takes word rarity and document length from the whole
-- table, every agent's rows together. These read-only views of each full-text index list every
-- term occurrence by document, so search counts an agent's own documents per term and term
-- frequencies per document (joined to the owner's rows) and scores BM25 itself.
CREATE VIRTUAL TABLE "MessageSearchInstance" USING fts5vocab('MessageSearch', 'instance');
CREATE VIRTUAL TABLE "MemorySearchInstance" USING fts5vocab('MemorySearch', 'instance');
CREATE VIRTUAL TABLE "KnowledgeSearchInstance" USING fts5vocab('KnowledgeSearch', 'instance');
