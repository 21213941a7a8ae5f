-- CreateTable
CREATE TABLE "Agent" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "privacyMode" TEXT NOT NULL DEFAULT 'redact',
    "privacyPatterns" TEXT NOT NULL DEFAULT '[]',
    "memorySettings" TEXT NOT NULL DEFAULT '{}',

    CONSTRAINT "Agent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" TEXT NOT NULL,
    "agentId" TEXT,
    "role" TEXT NOT NULL,
    "label" TEXT NOT NULL DEFAULT '',
    "keyHash" TEXT NOT NULL,
    "keyPrefix" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMPTZ(3),
    "lastUsedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ApiKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Session" (
    "id" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "conversationId" TEXT NOT NULL,
    "messageCount" INTEGER NOT NULL DEFAULT 0,
    "extractedThroughId" INTEGER,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Session_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Message" (
    "id" SERIAL NOT NULL,
    "sessionId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "speaker" TEXT,
    "content" TEXT NOT NULL,
    "tokenCount" INTEGER NOT NULL,
    "isCompressed" BOOLEAN NOT NULL DEFAULT false,
    "metadata" TEXT NOT NULL DEFAULT '{}',
    "timestamp" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MemoryEntry" (
    "id" SERIAL NOT NULL,
    "agentId" TEXT NOT NULL,
    "sessionId" TEXT,
    "messageId" INTEGER,
    "type" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "tokenCount" INTEGER NOT NULL,
    "relevance" DOUBLE PRECISION NOT NULL,
    "isCompressed" BOOLEAN NOT NULL DEFAULT false,
    "metadata" TEXT NOT NULL DEFAULT '{}',
    "timestamp" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "MemoryEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MemoryVector" (
    "entryId" INTEGER NOT NULL,
    "agentId" TEXT NOT NULL,
    "dimensions" INTEGER NOT NULL,
    "vector" BYTEA NOT NULL,
    "norm" DOUBLE PRECISION NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "MemoryVector_pkey" PRIMARY KEY ("entryId")
);

-- CreateTable
CREATE TABLE "Knowledge" (
    "id" SERIAL NOT NULL,
    "agentId" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "confidence" DOUBLE PRECISION NOT NULL,
    "storeCount" INTEGER NOT NULL DEFAULT 1,
    "useCount" INTEGER NOT NULL DEFAULT 0,
    "lastUsedAt" TIMESTAMPTZ(3),
    "lastDecayAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Knowledge_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AdaptiveParameter" (
    "agentId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" DOUBLE PRECISION NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AdaptiveParameter_pkey" PRIMARY KEY ("agentId","key")
);

-- CreateTable
CREATE TABLE "OptimizationSnapshot" (
    "id" SERIAL NOT NULL,
    "agentId" TEXT NOT NULL,
    "tokensBefore" INTEGER NOT NULL,
    "tokensAfter" INTEGER NOT NULL,
    "entriesCompressed" INTEGER NOT NULL,
    "entriesDropped" INTEGER NOT NULL,
    "entriesPromoted" INTEGER NOT NULL,
    "usageRatio" DOUBLE PRECISION NOT NULL,
    "compressionTriggerRatio" DOUBLE PRECISION NOT NULL,
    "fullMessageWindow" INTEGER NOT NULL,
    "minRelevanceScore" DOUBLE PRECISION NOT NULL,
    "timestamp" TIMESTAMPTZ(3) NOT NULL,
    "explanation" TEXT,

    CONSTRAINT "OptimizationSnapshot_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MemoryItem" (
    "id" SERIAL NOT NULL,
    "agentId" TEXT NOT NULL,
    "userId" TEXT,
    "content" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "tags" TEXT NOT NULL DEFAULT '[]',
    "importance" DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    "confidence" DOUBLE PRECISION NOT NULL DEFAULT 1,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "sourceConversationId" TEXT,
    "sourceMessageId" TEXT,
    "accessCount" INTEGER NOT NULL DEFAULT 0,
    "lastAccessedAt" TIMESTAMPTZ(3),
    "validFrom" TIMESTAMPTZ(3) NOT NULL,
    "validUntil" TIMESTAMPTZ(3),
    "supersededById" INTEGER,
    "metadata" TEXT NOT NULL DEFAULT '{}',
    "contentHash" TEXT NOT NULL,
    "tokenCount" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "MemoryItem_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Embedding" (
    "kind" TEXT NOT NULL,
    "ownerId" INTEGER NOT NULL,
    "agentId" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "dimensions" INTEGER NOT NULL,
    "vector" BYTEA NOT NULL,
    "contentHash" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Embedding_pkey" PRIMARY KEY ("kind","ownerId","model")
);

-- CreateTable
CREATE TABLE "EmbeddingCache" (
    "agentId" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "contentHash" TEXT NOT NULL,
    "dimensions" INTEGER NOT NULL,
    "vector" BYTEA NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "EmbeddingCache_pkey" PRIMARY KEY ("agentId","model","contentHash")
);

-- CreateTable
CREATE TABLE "Job" (
    "id" SERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "payload" TEXT NOT NULL DEFAULT '{}',
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "runAfter" TIMESTAMPTZ(3) NOT NULL,
    "leaseOwner" TEXT,
    "leaseUntil" TIMESTAMPTZ(3),
    "lastError" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Job_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Summary" (
    "id" SERIAL NOT NULL,
    "agentId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "conversationId" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "strategy" TEXT NOT NULL,
    "writer" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "firstMessageId" TEXT NOT NULL,
    "lastMessageId" TEXT NOT NULL,
    "messageCount" INTEGER NOT NULL,
    "tokenCount" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Summary_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SummaryCursor" (
    "agentId" TEXT NOT NULL,
    "conversationId" TEXT NOT NULL,
    "lastTurnAt" TIMESTAMPTZ(3) NOT NULL,
    "summarisedThroughId" TEXT,
    "lastSummaryAt" TIMESTAMPTZ(3),
    "pendingTokens" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "SummaryCursor_pkey" PRIMARY KEY ("agentId","conversationId")
);

-- CreateTable
CREATE TABLE "ProfileVersion" (
    "id" SERIAL NOT NULL,
    "agentId" TEXT NOT NULL,
    "userId" TEXT NOT NULL DEFAULT '',
    "version" INTEGER NOT NULL,
    "content" TEXT NOT NULL,
    "tokenCount" INTEGER NOT NULL,
    "writer" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "sourceMemoryIds" TEXT NOT NULL DEFAULT '[]',
    "overrideIds" TEXT NOT NULL DEFAULT '[]',
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ProfileVersion_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_keyHash_key" ON "ApiKey"("keyHash");

-- CreateIndex
CREATE INDEX "ApiKey_agentId_idx" ON "ApiKey"("agentId");

-- CreateIndex
CREATE UNIQUE INDEX "Session_agentId_conversationId_key" ON "Session"("agentId", "conversationId");

-- CreateIndex
CREATE INDEX "Message_sessionId_timestamp_id_idx" ON "Message"("sessionId", "timestamp", "id");

-- CreateIndex
CREATE INDEX "Message_agentId_idx" ON "Message"("agentId");

-- CreateIndex
CREATE INDEX "Message_agentId_speaker_idx" ON "Message"("agentId", "speaker");

-- CreateIndex
CREATE INDEX "Message_agentId_sessionId_idx" ON "Message"("agentId", "sessionId");

-- CreateIndex
CREATE INDEX "Message_agentId_timestamp_idx" ON "Message"("agentId", "timestamp" DESC);

-- CreateIndex
CREATE INDEX "Message_createdAt_idx" ON "Message" USING BRIN ("createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "MemoryEntry_messageId_key" ON "MemoryEntry"("messageId");

-- CreateIndex
CREATE INDEX "MemoryEntry_agentId_type_timestamp_idx" ON "MemoryEntry"("agentId", "type", "timestamp");

-- CreateIndex
CREATE INDEX "MemoryEntry_sessionId_idx" ON "MemoryEntry"("sessionId");

-- CreateIndex
CREATE INDEX "MemoryEntry_agentId_sessionId_idx" ON "MemoryEntry"("agentId", "sessionId");

-- CreateIndex
CREATE INDEX "MemoryEntry_agentId_timestamp_idx" ON "MemoryEntry"("agentId", "timestamp" DESC);

-- CreateIndex
CREATE INDEX "MemoryEntry_createdAt_idx" ON "MemoryEntry" USING BRIN ("createdAt");

-- CreateIndex
CREATE INDEX "MemoryVector_agentId_idx" ON "MemoryVector"("agentId");

-- CreateIndex
CREATE INDEX "Knowledge_agentId_confidence_idx" ON "Knowledge"("agentId", "confidence");

-- CreateIndex
CREATE UNIQUE INDEX "Knowledge_agentId_category_key_key" ON "Knowledge"("agentId", "category", "key");

-- CreateIndex
CREATE INDEX "OptimizationSnapshot_agentId_timestamp_idx" ON "OptimizationSnapshot"("agentId", "timestamp");

-- CreateIndex
CREATE INDEX "MemoryItem_agentId_validUntil_idx" ON "MemoryItem"("agentId", "validUntil");

-- CreateIndex
CREATE INDEX "MemoryItem_agentId_category_idx" ON "MemoryItem"("agentId", "category");

-- CreateIndex
CREATE INDEX "MemoryItem_agentId_userId_idx" ON "MemoryItem"("agentId", "userId");

-- CreateIndex
CREATE INDEX "MemoryItem_agentId_contentHash_idx" ON "MemoryItem"("agentId", "contentHash");

-- CreateIndex
CREATE INDEX "MemoryItem_agentId_importance_idx" ON "MemoryItem"("agentId", "importance" DESC);

-- CreateIndex
CREATE INDEX "MemoryItem_recent_important_idx" ON "MemoryItem"("agentId", "createdAt" DESC) WHERE (importance > 0.7);

-- CreateIndex
CREATE INDEX "MemoryItem_createdAt_idx" ON "MemoryItem" USING BRIN ("createdAt");

-- CreateIndex
CREATE INDEX "Embedding_agentId_kind_model_idx" ON "Embedding"("agentId", "kind", "model");

-- CreateIndex
CREATE INDEX "Embedding_createdAt_idx" ON "Embedding" USING BRIN ("createdAt");

-- CreateIndex
CREATE INDEX "Job_kind_state_runAfter_idx" ON "Job"("kind", "state", "runAfter");

-- CreateIndex
CREATE INDEX "Job_key_state_idx" ON "Job"("key", "state");

-- CreateIndex
CREATE INDEX "Job_agentId_kind_state_idx" ON "Job"("agentId", "kind", "state");

-- CreateIndex
CREATE INDEX "Summary_agentId_createdAt_idx" ON "Summary"("agentId", "createdAt");

-- CreateIndex
CREATE INDEX "Summary_agentId_conversationId_idx" ON "Summary"("agentId", "conversationId");

-- CreateIndex
CREATE INDEX "SummaryCursor_agentId_lastTurnAt_idx" ON "SummaryCursor"("agentId", "lastTurnAt");

-- CreateIndex
CREATE UNIQUE INDEX "ProfileVersion_agentId_userId_version_key" ON "ProfileVersion"("agentId", "userId", "version");

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Session" ADD CONSTRAINT "Session_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Message" ADD CONSTRAINT "Message_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Message" ADD CONSTRAINT "Message_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemoryEntry" ADD CONSTRAINT "MemoryEntry_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemoryEntry" ADD CONSTRAINT "MemoryEntry_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemoryEntry" ADD CONSTRAINT "MemoryEntry_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemoryVector" ADD CONSTRAINT "MemoryVector_entryId_fkey" FOREIGN KEY ("entryId") REFERENCES "MemoryEntry"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemoryVector" ADD CONSTRAINT "MemoryVector_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Knowledge" ADD CONSTRAINT "Knowledge_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AdaptiveParameter" ADD CONSTRAINT "AdaptiveParameter_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OptimizationSnapshot" ADD CONSTRAINT "OptimizationSnapshot_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemoryItem" ADD CONSTRAINT "MemoryItem_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemoryItem" ADD CONSTRAINT "MemoryItem_supersededById_fkey" FOREIGN KEY ("supersededById") REFERENCES "MemoryItem"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Embedding" ADD CONSTRAINT "Embedding_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EmbeddingCache" ADD CONSTRAINT "EmbeddingCache_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Job" ADD CONSTRAINT "Job_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Summary" ADD CONSTRAINT "Summary_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Summary" ADD CONSTRAINT "Summary_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SummaryCursor" ADD CONSTRAINT "SummaryCursor_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProfileVersion" ADD CONSTRAINT "ProfileVersion_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Vectors go with their owner, as on SQLite (its migrations' *_embedding_delete triggers): the
-- Embedding table's ownerId points into four tables, which no foreign key can express.
CREATE FUNCTION "engram_delete_owned_embeddings"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM "Embedding" WHERE "kind" = TG_ARGV[0] AND "ownerId" = OLD."id";
    RETURN OLD;
END;
$$;

CREATE TRIGGER "MemoryItem_embedding_delete" AFTER DELETE ON "MemoryItem"
    FOR EACH ROW EXECUTE FUNCTION "engram_delete_owned_embeddings"('memory');
CREATE TRIGGER "Knowledge_embedding_delete" AFTER DELETE ON "Knowledge"
    FOR EACH ROW EXECUTE FUNCTION "engram_delete_owned_embeddings"('knowledge');
CREATE TRIGGER "Message_embedding_delete" AFTER DELETE ON "Message"
    FOR EACH ROW EXECUTE FUNCTION "engram_delete_owned_embeddings"('message');
CREATE TRIGGER "Summary_embedding_delete" AFTER DELETE ON "Summary"
    FOR EACH ROW EXECUTE FUNCTION "engram_delete_owned_embeddings"('summary');
