-- Maintenance runs (issue 17 §4): what each run removed (counts only) and reclaimed; a scheduled
-- run's slot is unique, so two processes on one database run a cron occurrence once.
-- CreateTable
CREATE TABLE "MaintenanceRun" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "trigger" TEXT NOT NULL,
    "dryRun" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "slot" DATETIME,
    "agentId" TEXT,
    "holder" TEXT NOT NULL,
    "removed" TEXT NOT NULL DEFAULT '{}',
    "bytesReclaimed" REAL,
    "steps" TEXT NOT NULL DEFAULT '[]',
    "error" TEXT,
    "startedAt" DATETIME NOT NULL,
    "finishedAt" DATETIME,
    CONSTRAINT "MaintenanceRun_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "MaintenanceRun_slot_key" ON "MaintenanceRun"("slot");

-- CreateIndex
CREATE INDEX "MaintenanceRun_startedAt_idx" ON "MaintenanceRun"("startedAt" DESC);

-- CreateIndex
CREATE INDEX "MaintenanceRun_agentId_idx" ON "MaintenanceRun"("agentId");
