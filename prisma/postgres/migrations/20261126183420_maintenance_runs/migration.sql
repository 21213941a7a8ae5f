-- Maintenance runs (issue 17 §4): what each run removed (counts only) and reclaimed; a scheduled
-- run's slot is unique, so two processes on one database run a cron occurrence once.
-- CreateTable
CREATE TABLE "MaintenanceRun" (
    "id" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "dryRun" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "slot" TIMESTAMPTZ(3),
    "agentId" TEXT,
    "holder" TEXT NOT NULL,
    "removed" TEXT NOT NULL DEFAULT '{}',
    "bytesReclaimed" DOUBLE PRECISION,
    "steps" TEXT NOT NULL DEFAULT '[]',
    "error" TEXT,
    "startedAt" TIMESTAMPTZ(3) NOT NULL,
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "MaintenanceRun_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "MaintenanceRun_slot_key" ON "MaintenanceRun"("slot");

-- CreateIndex
CREATE INDEX "MaintenanceRun_startedAt_idx" ON "MaintenanceRun"("startedAt" DESC);

-- CreateIndex
CREATE INDEX "MaintenanceRun_agentId_idx" ON "MaintenanceRun"("agentId");

-- AddForeignKey
ALTER TABLE "MaintenanceRun" ADD CONSTRAINT "MaintenanceRun_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE SET NULL ON UPDATE CASCADE;
