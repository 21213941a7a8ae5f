-- CreateTable
CREATE TABLE "MemoryItem" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "agentId" TEXT NOT NULL,
    "userId" TEXT,
    "content" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "tags" TEXT NOT NULL DEFAULT '[]',
    "importance" REAL NOT NULL DEFAULT 0.5,
    "confidence" REAL NOT NULL DEFAULT 1,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "sourceConversationId" TEXT,
    "sourceMessageId" TEXT,
    "accessCount" INTEGER NOT NULL DEFAULT 0,
    "lastAccessedAt" DATETIME,
    "validFrom" DATETIME NOT NULL,
    "validUntil" DATETIME,
    "supersededById" INTEGER,
    "metadata" TEXT NOT NULL DEFAULT '{}',
    "contentHash" TEXT NOT NULL,
    "tokenCount" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "MemoryItem_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "MemoryItem_supersededById_fkey" FOREIGN KEY ("supersededById") REFERENCES "MemoryItem" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Embedding" (
    "kind" TEXT NOT NULL,
    "ownerId" INTEGER NOT NULL,
    "agentId" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "dimensions" INTEGER NOT NULL,
    "vector" BLOB NOT NULL,
    "contentHash" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,

    PRIMARY KEY ("kind", "ownerId", "model"),
    CONSTRAINT "Embedding_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "EmbeddingCache" (
    "model" TEXT NOT NULL,
    "contentHash" TEXT NOT NULL,
    "dimensions" INTEGER NOT NULL,
    "vector" BLOB NOT NULL,
    "createdAt" DATETIME NOT NULL,

    PRIMARY KEY ("model", "contentHash")
);

-- AlterTable (a column with a constant default: no table rebuild needed)
ALTER TABLE "Agent" ADD COLUMN "memorySettings" TEXT NOT NULL DEFAULT '{}';

-- CreateIndex
CREATE INDEX "MemoryItem_agentId_validUntil_idx" ON "MemoryItem"("agentId", "validUntil");

-- CreateIndex
CREATE INDEX "MemoryItem_agentId_category_idx" ON "MemoryItem"("agentId", "category");

-- CreateIndex
CREATE INDEX "MemoryItem_agentId_userId_idx" ON "MemoryItem"("agentId", "userId");

-- CreateIndex
CREATE INDEX "MemoryItem_agentId_contentHash_idx" ON "MemoryItem"("agentId", "contentHash");

-- CreateIndex
CREATE INDEX "Embedding_agentId_kind_model_idx" ON "Embedding"("agentId", "kind", "model");

-- Full-text indexes (BM25) over memory items and knowledge, kept in step by triggers like
-- "MessageSearch". External-content tables: the text stays in its own table.
CREATE VIRTUAL TABLE "MemorySearch" USING fts5(
    content,
    tags,
    content = 'MemoryItem',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER "MemoryItem_search_insert" AFTER INSERT ON "MemoryItem" BEGIN
    INSERT INTO "MemorySearch" ("rowid", "content", "tags") VALUES (new."id", new."content", new."tags");
END;

CREATE TRIGGER "MemoryItem_search_delete" AFTER DELETE ON "MemoryItem" BEGIN
    INSERT INTO "MemorySearch" ("MemorySearch", "rowid", "content", "tags") VALUES ('delete', old."id", old."content", old."tags");
    DELETE FROM "Embedding" WHERE "kind" = 'memory' AND "ownerId" = old."id";
END;

CREATE TRIGGER "MemoryItem_search_update" AFTER UPDATE OF "content", "tags" ON "MemoryItem" BEGIN
    INSERT INTO "MemorySearch" ("MemorySearch", "rowid", "content", "tags") VALUES ('delete', old."id", old."content", old."tags");
    INSERT INTO "MemorySearch" ("rowid", "content", "tags") VALUES (new."id", new."content", new."tags");
END;

CREATE VIRTUAL TABLE "KnowledgeSearch" USING fts5(
    key,
    value,
    content = 'Knowledge',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

INSERT INTO "KnowledgeSearch" ("rowid", "key", "value") SELECT "id", "key", "value" FROM "Knowledge";

CREATE TRIGGER "Knowledge_search_insert" AFTER INSERT ON "Knowledge" BEGIN
    INSERT INTO "KnowledgeSearch" ("rowid", "key", "value") VALUES (new."id", new."key", new."value");
END;

CREATE TRIGGER "Knowledge_search_delete" AFTER DELETE ON "Knowledge" BEGIN
    INSERT INTO "KnowledgeSearch" ("KnowledgeSearch", "rowid", "key", "value") VALUES ('delete', old."id", old."key", old."value");
    DELETE FROM "Embedding" WHERE "kind" = 'knowledge' AND "ownerId" = old."id";
END;

CREATE TRIGGER "Knowledge_search_update" AFTER UPDATE OF "key", "value" ON "Knowledge" BEGIN
    INSERT INTO "KnowledgeSearch" ("KnowledgeSearch", "rowid", "key", "value") VALUES ('delete', old."id", old."key", old."value");
    INSERT INTO "KnowledgeSearch" ("rowid", "key", "value") VALUES (new."id", new."key", new."value");
END;

-- A message's vectors go with it.
CREATE TRIGGER "Message_embedding_delete" AFTER DELETE ON "Message" BEGIN
    DELETE FROM "Embedding" WHERE "kind" = 'message' AND "ownerId" = old."id";
END;
