-- CreateTable
CREATE TABLE "Summary" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
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
    "createdAt" DATETIME NOT NULL,
    CONSTRAINT "Summary_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Summary_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SummaryCursor" (
    "agentId" TEXT NOT NULL,
    "conversationId" TEXT NOT NULL,
    "lastTurnAt" DATETIME NOT NULL,
    "summarisedThroughId" TEXT,
    "lastSummaryAt" DATETIME,
    "pendingTokens" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("agentId", "conversationId"),
    CONSTRAINT "SummaryCursor_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "ProfileVersion" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "agentId" TEXT NOT NULL,
    "userId" TEXT NOT NULL DEFAULT '',
    "version" INTEGER NOT NULL,
    "content" TEXT NOT NULL,
    "tokenCount" INTEGER NOT NULL,
    "writer" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "sourceMemoryIds" TEXT NOT NULL DEFAULT '[]',
    "overrideIds" TEXT NOT NULL DEFAULT '[]',
    "createdAt" DATETIME NOT NULL,
    CONSTRAINT "ProfileVersion_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "Summary_agentId_createdAt_idx" ON "Summary"("agentId", "createdAt");

-- CreateIndex
CREATE INDEX "Summary_agentId_conversationId_idx" ON "Summary"("agentId", "conversationId");

-- CreateIndex
CREATE INDEX "SummaryCursor_agentId_lastTurnAt_idx" ON "SummaryCursor"("agentId", "lastTurnAt");

-- CreateIndex
CREATE UNIQUE INDEX "ProfileVersion_agentId_userId_version_key" ON "ProfileVersion"("agentId", "userId", "version");
