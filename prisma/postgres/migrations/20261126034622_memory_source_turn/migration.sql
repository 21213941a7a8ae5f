-- CreateIndex
CREATE INDEX "MemoryItem_agentId_sourceMessageId_idx" ON "MemoryItem"("agentId", "sourceMessageId");
