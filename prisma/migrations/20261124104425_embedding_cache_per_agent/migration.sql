-- The embedding cache becomes per agent (see schema.prisma), deleted with the agent's data.
-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_EmbeddingCache" (
    "agentId" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "contentHash" TEXT NOT NULL,
    "dimensions" INTEGER NOT NULL,
    "vector" BLOB NOT NULL,
    "createdAt" DATETIME NOT NULL,

    PRIMARY KEY ("agentId", "model", "contentHash"),
    CONSTRAINT "EmbeddingCache_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- Cached vectors are kept for each agent that stores a text with that hash; the rest (query texts,
-- texts since deleted) cannot be attributed to an agent and are dropped: a cache, computed again.
INSERT INTO "new_EmbeddingCache" ("agentId", "model", "contentHash", "dimensions", "vector", "createdAt")
SELECT DISTINCT e."agentId", c."model", c."contentHash", c."dimensions", c."vector", c."createdAt"
FROM "EmbeddingCache" c JOIN "Embedding" e ON e."model" = c."model" AND e."contentHash" = c."contentHash";
DROP TABLE "EmbeddingCache";
ALTER TABLE "new_EmbeddingCache" RENAME TO "EmbeddingCache";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
