-- Shared memory pools (issue 17): pools, their members with roles, and which agent contributed
-- each of a pool's memories (the memories themselves are MemoryItem rows of the pool's storage
-- agent "pool:<id>").
-- CreateTable
CREATE TABLE "MemoryPool" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "MemoryPool_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PoolMember" (
    "poolId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "addedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "PoolMember_pkey" PRIMARY KEY ("poolId","agentId")
);

-- CreateTable
CREATE TABLE "PoolContribution" (
    "poolId" TEXT NOT NULL,
    "memoryId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "contributedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "PoolContribution_pkey" PRIMARY KEY ("poolId","memoryId")
);

-- CreateIndex
CREATE UNIQUE INDEX "MemoryPool_name_key" ON "MemoryPool"("name");

-- CreateIndex
CREATE INDEX "PoolMember_agentId_idx" ON "PoolMember"("agentId");

-- CreateIndex
CREATE INDEX "PoolContribution_agentId_idx" ON "PoolContribution"("agentId");

-- AddForeignKey
ALTER TABLE "PoolMember" ADD CONSTRAINT "PoolMember_poolId_fkey" FOREIGN KEY ("poolId") REFERENCES "MemoryPool"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PoolMember" ADD CONSTRAINT "PoolMember_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PoolContribution" ADD CONSTRAINT "PoolContribution_poolId_fkey" FOREIGN KEY ("poolId") REFERENCES "MemoryPool"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PoolContribution" ADD CONSTRAINT "PoolContribution_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;
