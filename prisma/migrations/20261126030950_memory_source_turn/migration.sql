-- Search over memories reaches a memory formed from chat through its source turn (the turn's
-- words and dialogue in the messages' index): memories are looked up by the turns search found.
-- CreateIndex
CREATE INDEX "MemoryItem_agentId_sourceMessageId_idx" ON "MemoryItem"("agentId", "sourceMessageId");
