-- Every stored turn reads its agent's newest summary cursor (switch detection: ORDER BY
-- "lastTurnAt" DESC, "conversationId" LIMIT 1). The index on ("agentId", "lastTurnAt") left a temp
-- B-tree for the second key; this one serves the read in order, and every read the old one served
-- (its columns lead this one), so it replaces it rather than adding a second index to each write.
-- DropIndex
DROP INDEX "SummaryCursor_agentId_lastTurnAt_idx";

-- CreateIndex
CREATE INDEX "SummaryCursor_agentId_lastTurnAt_conversationId_idx" ON "SummaryCursor"("agentId", "lastTurnAt" DESC, "conversationId");
