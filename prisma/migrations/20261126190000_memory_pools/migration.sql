-- Shared memory pools (issue 17): pools, their members with roles, and which agent contributed
-- each of a pool's memories (the memories themselves are MemoryItem rows of the pool's storage
-- agent "pool:<id>").
-- CreateTable
CREATE TABLE "MemoryPool" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "createdAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "PoolMember" (
    "poolId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "addedAt" DATETIME NOT NULL,

    PRIMARY KEY ("poolId", "agentId"),
    CONSTRAINT "PoolMember_poolId_fkey" FOREIGN KEY ("poolId") REFERENCES "MemoryPool" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "PoolMember_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "PoolContribution" (
    "poolId" TEXT NOT NULL,
    "memoryId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "contributedAt" DATETIME NOT NULL,

    PRIMARY KEY ("poolId", "memoryId"),
    CONSTRAINT "PoolContribution_poolId_fkey" FOREIGN KEY ("poolId") REFERENCES "MemoryPool" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "PoolContribution_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "MemoryPool_name_key" ON "MemoryPool"("name");

-- CreateIndex
CREATE INDEX "PoolMember_agentId_idx" ON "PoolMember"("agentId");

-- CreateIndex
CREATE INDEX "PoolContribution_agentId_idx" ON "PoolContribution"("agentId");
