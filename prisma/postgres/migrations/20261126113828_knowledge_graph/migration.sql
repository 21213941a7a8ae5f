-- The knowledge graph (issue 15): entities, their name terms (exact-name and shared-token lookups
-- as index seeks), bi-temporal relationships and the evidence tying both to memories and messages.
-- CreateTable
CREATE TABLE "GraphEntity" (
    "id" SERIAL NOT NULL,
    "agentId" TEXT NOT NULL,
    "userId" TEXT,
    "type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "normalizedName" TEXT NOT NULL,
    "aliases" TEXT NOT NULL DEFAULT '[]',
    "summary" TEXT,
    "embedding" BYTEA,
    "mentionCount" INTEGER NOT NULL DEFAULT 0,
    "origin" TEXT NOT NULL,
    "firstSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "lastSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "GraphEntity_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GraphEntityTerm" (
    "entityId" INTEGER NOT NULL,
    "agentId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "term" TEXT NOT NULL,

    CONSTRAINT "GraphEntityTerm_pkey" PRIMARY KEY ("entityId","kind","term")
);

-- CreateTable
CREATE TABLE "GraphRelationship" (
    "id" SERIAL NOT NULL,
    "agentId" TEXT NOT NULL,
    "userId" TEXT,
    "sourceId" INTEGER NOT NULL,
    "relation" TEXT NOT NULL,
    "targetId" INTEGER NOT NULL,
    "confidence" DOUBLE PRECISION NOT NULL,
    "validFrom" TIMESTAMPTZ(3),
    "validUntil" TIMESTAMPTZ(3),
    "learntAt" TIMESTAMPTZ(3) NOT NULL,
    "retiredAt" TIMESTAMPTZ(3),
    "retiredReason" TEXT,
    "supersededById" INTEGER,
    "origin" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "GraphRelationship_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GraphEvidence" (
    "id" SERIAL NOT NULL,
    "agentId" TEXT NOT NULL,
    "entityId" INTEGER,
    "relationshipId" INTEGER,
    "memoryId" TEXT,
    "messageId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "GraphEvidence_pkey" PRIMARY KEY ("id")
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

-- AddForeignKey
ALTER TABLE "GraphEntity" ADD CONSTRAINT "GraphEntity_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GraphEntityTerm" ADD CONSTRAINT "GraphEntityTerm_entityId_fkey" FOREIGN KEY ("entityId") REFERENCES "GraphEntity"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GraphRelationship" ADD CONSTRAINT "GraphRelationship_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GraphRelationship" ADD CONSTRAINT "GraphRelationship_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "GraphEntity"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GraphRelationship" ADD CONSTRAINT "GraphRelationship_targetId_fkey" FOREIGN KEY ("targetId") REFERENCES "GraphEntity"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GraphRelationship" ADD CONSTRAINT "GraphRelationship_supersededById_fkey" FOREIGN KEY ("supersededById") REFERENCES "GraphRelationship"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GraphEvidence" ADD CONSTRAINT "GraphEvidence_entityId_fkey" FOREIGN KEY ("entityId") REFERENCES "GraphEntity"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GraphEvidence" ADD CONSTRAINT "GraphEvidence_relationshipId_fkey" FOREIGN KEY ("relationshipId") REFERENCES "GraphRelationship"("id") ON DELETE CASCADE ON UPDATE CASCADE;
