-- The knowledge graph (issue 15): entities, their name terms (exact-name and shared-token lookups
-- as index seeks), bi-temporal relationships and the evidence tying both to memories and messages.
-- CreateTable
CREATE TABLE "GraphEntity" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "agentId" TEXT NOT NULL,
    "userId" TEXT,
    "type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "normalizedName" TEXT NOT NULL,
    "aliases" TEXT NOT NULL DEFAULT '[]',
    "summary" TEXT,
    "embedding" BLOB,
    "mentionCount" INTEGER NOT NULL DEFAULT 0,
    "origin" TEXT NOT NULL,
    "firstSeenAt" DATETIME NOT NULL,
    "lastSeenAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "GraphEntity_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "GraphEntityTerm" (
    "entityId" INTEGER NOT NULL,
    "agentId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "term" TEXT NOT NULL,

    PRIMARY KEY ("entityId", "kind", "term"),
    CONSTRAINT "GraphEntityTerm_entityId_fkey" FOREIGN KEY ("entityId") REFERENCES "GraphEntity" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "GraphRelationship" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "agentId" TEXT NOT NULL,
    "userId" TEXT,
    "sourceId" INTEGER NOT NULL,
    "relation" TEXT NOT NULL,
    "targetId" INTEGER NOT NULL,
    "confidence" REAL NOT NULL,
    "validFrom" DATETIME,
    "validUntil" DATETIME,
    "learntAt" DATETIME NOT NULL,
    "retiredAt" DATETIME,
    "retiredReason" TEXT,
    "supersededById" INTEGER,
    "origin" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "GraphRelationship_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "GraphRelationship_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "GraphEntity" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "GraphRelationship_targetId_fkey" FOREIGN KEY ("targetId") REFERENCES "GraphEntity" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "GraphRelationship_supersededById_fkey" FOREIGN KEY ("supersededById") REFERENCES "GraphRelationship" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "GraphEvidence" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "agentId" TEXT NOT NULL,
    "entityId" INTEGER,
    "relationshipId" INTEGER,
    "memoryId" TEXT,
    "messageId" TEXT,
    "createdAt" DATETIME NOT NULL,
    CONSTRAINT "GraphEvidence_entityId_fkey" FOREIGN KEY ("entityId") REFERENCES "GraphEntity" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "GraphEvidence_relationshipId_fkey" FOREIGN KEY ("relationshipId") REFERENCES "GraphRelationship" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "GraphEntity_agentId_mentionCount_idx" ON "GraphEntity"("agentId", "mentionCount" DESC);

-- CreateIndex
CREATE INDEX "GraphEntity_agentId_type_idx" ON "GraphEntity"("agentId", "type");

-- CreateIndex
CREATE INDEX "GraphEntityTerm_agentId_kind_term_idx" ON "GraphEntityTerm"("agentId", "kind", "term");

-- CreateIndex
CREATE INDEX "GraphRelationship_agentId_sourceId_idx" ON "GraphRelationship"("agentId", "sourceId");

-- CreateIndex
CREATE INDEX "GraphRelationship_agentId_targetId_idx" ON "GraphRelationship"("agentId", "targetId");

-- CreateIndex
CREATE INDEX "GraphRelationship_agentId_relation_idx" ON "GraphRelationship"("agentId", "relation");

-- CreateIndex
CREATE INDEX "GraphRelationship_supersededById_idx" ON "GraphRelationship"("supersededById");

-- CreateIndex
CREATE INDEX "GraphEvidence_agentId_memoryId_idx" ON "GraphEvidence"("agentId", "memoryId");

-- CreateIndex
CREATE INDEX "GraphEvidence_agentId_messageId_idx" ON "GraphEvidence"("agentId", "messageId");

-- CreateIndex
CREATE INDEX "GraphEvidence_entityId_idx" ON "GraphEvidence"("entityId");

-- CreateIndex
CREATE INDEX "GraphEvidence_relationshipId_idx" ON "GraphEvidence"("relationshipId");
