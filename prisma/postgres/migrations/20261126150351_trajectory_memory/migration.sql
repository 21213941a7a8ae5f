-- Trajectory memory (issue 16, spec 004): the run registry, run session history, trajectories with
-- their goal-word index (reference matching as index seeks), app facts, known selectors, hints and
-- what each run contributed to facts and selectors (so deleting a run takes exactly that back).
-- CreateTable
CREATE TABLE "AgentRun" (
    "agentId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "parentRunId" TEXT,
    "kind" TEXT NOT NULL,
    "isolation" TEXT NOT NULL,
    "scope" TEXT,
    "status" TEXT NOT NULL,
    "goal" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "startUrl" TEXT,
    "currentUrl" TEXT,
    "finalUrl" TEXT,
    "turnCount" INTEGER NOT NULL,
    "success" BOOLEAN,
    "summary" TEXT,
    "result" TEXT,
    "reason" TEXT,
    "artifactPaths" TEXT NOT NULL DEFAULT '[]',
    "model" TEXT,
    "durationMs" INTEGER,
    "extra" TEXT,
    "startedAt" TIMESTAMPTZ(3) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,
    "completedAt" TIMESTAMPTZ(3),

    CONSTRAINT "AgentRun_pkey" PRIMARY KEY ("agentId","runId")
);

-- CreateTable
CREATE TABLE "RunSession" (
    "agentId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "runId" TEXT,
    "goal" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "success" BOOLEAN NOT NULL,
    "finalUrl" TEXT,
    "turnsUsed" INTEGER NOT NULL,
    "durationMs" INTEGER NOT NULL,
    "endedAt" TIMESTAMPTZ(3) NOT NULL,
    "extra" TEXT,

    CONSTRAINT "RunSession_pkey" PRIMARY KEY ("agentId","id")
);

-- CreateTable
CREATE TABLE "Trajectory" (
    "agentId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "origin" TEXT,
    "goal" TEXT NOT NULL,
    "words" TEXT NOT NULL DEFAULT '[]',
    "runId" TEXT,
    "steps" TEXT NOT NULL DEFAULT '[]',
    "stepCount" INTEGER NOT NULL,
    "verifiedCount" INTEGER NOT NULL,
    "success" BOOLEAN NOT NULL,
    "turns" INTEGER NOT NULL,
    "durationMs" INTEGER NOT NULL,
    "outcome" TEXT,
    "model" TEXT,
    "recordedAt" TIMESTAMPTZ(3) NOT NULL,
    "extra" TEXT,

    CONSTRAINT "Trajectory_pkey" PRIMARY KEY ("agentId","id")
);

-- CreateTable
CREATE TABLE "TrajectoryWord" (
    "agentId" TEXT NOT NULL,
    "trajectoryId" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "word" TEXT NOT NULL,
    "success" BOOLEAN NOT NULL,
    "recordedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "TrajectoryWord_pkey" PRIMARY KEY ("agentId","trajectoryId","word")
);

-- CreateTable
CREATE TABLE "AppFact" (
    "agentId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "confidence" DOUBLE PRECISION NOT NULL,
    "sources" INTEGER NOT NULL,
    "lastSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "extra" TEXT,

    CONSTRAINT "AppFact_pkey" PRIMARY KEY ("agentId","id")
);

-- CreateTable
CREATE TABLE "KnownSelector" (
    "agentId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "element" TEXT NOT NULL,
    "selector" TEXT NOT NULL,
    "successCount" INTEGER NOT NULL,
    "failureCount" INTEGER NOT NULL,
    "consecutiveFailures" INTEGER NOT NULL,
    "lastUsedAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "extra" TEXT,

    CONSTRAINT "KnownSelector_pkey" PRIMARY KEY ("agentId","id")
);

-- CreateTable
CREATE TABLE "RunHint" (
    "agentId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,
    "extra" TEXT,

    CONSTRAINT "RunHint_pkey" PRIMARY KEY ("agentId","id")
);

-- CreateTable
CREATE TABLE "RunContribution" (
    "id" SERIAL NOT NULL,
    "agentId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "targetId" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "successes" INTEGER NOT NULL DEFAULT 0,
    "failures" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "RunContribution_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AgentRun_agentId_updatedAt_runId_idx" ON "AgentRun"("agentId", "updatedAt" DESC, "runId" DESC);

-- CreateIndex
CREATE INDEX "AgentRun_agentId_domain_updatedAt_idx" ON "AgentRun"("agentId", "domain", "updatedAt" DESC);

-- CreateIndex
CREATE INDEX "AgentRun_agentId_status_updatedAt_idx" ON "AgentRun"("agentId", "status", "updatedAt" DESC);

-- CreateIndex
CREATE INDEX "AgentRun_agentId_sessionId_updatedAt_idx" ON "AgentRun"("agentId", "sessionId", "updatedAt" DESC);

-- CreateIndex
CREATE INDEX "AgentRun_agentId_scope_domain_idx" ON "AgentRun"("agentId", "scope", "domain");

-- CreateIndex
CREATE INDEX "AgentRun_agentId_parentRunId_startedAt_idx" ON "AgentRun"("agentId", "parentRunId", "startedAt");

-- CreateIndex
CREATE INDEX "RunSession_agentId_scope_domain_endedAt_idx" ON "RunSession"("agentId", "scope", "domain", "endedAt" DESC);

-- CreateIndex
CREATE INDEX "RunSession_agentId_runId_idx" ON "RunSession"("agentId", "runId");

-- CreateIndex
CREATE INDEX "Trajectory_agentId_scope_domain_recordedAt_idx" ON "Trajectory"("agentId", "scope", "domain", "recordedAt" DESC);

-- CreateIndex
CREATE INDEX "Trajectory_agentId_runId_idx" ON "Trajectory"("agentId", "runId");

-- CreateIndex
CREATE INDEX "TrajectoryWord_agentId_scope_domain_word_success_recordedAt_idx" ON "TrajectoryWord"("agentId", "scope", "domain", "word", "success", "recordedAt", "trajectoryId");

-- CreateIndex
CREATE INDEX "AppFact_agentId_scope_confidence_idx" ON "AppFact"("agentId", "scope", "confidence" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "AppFact_agentId_scope_domain_type_key_value_key" ON "AppFact"("agentId", "scope", "domain", "type", "key", "value");

-- CreateIndex
CREATE UNIQUE INDEX "KnownSelector_agentId_scope_domain_element_selector_key" ON "KnownSelector"("agentId", "scope", "domain", "element", "selector");

-- CreateIndex
CREATE INDEX "RunHint_agentId_scope_createdAt_idx" ON "RunHint"("agentId", "scope", "createdAt");

-- CreateIndex
CREATE INDEX "RunContribution_agentId_kind_targetId_idx" ON "RunContribution"("agentId", "kind", "targetId");

-- CreateIndex
CREATE INDEX "RunContribution_agentId_scope_domain_idx" ON "RunContribution"("agentId", "scope", "domain");

-- CreateIndex
CREATE UNIQUE INDEX "RunContribution_agentId_runId_kind_targetId_key" ON "RunContribution"("agentId", "runId", "kind", "targetId");

-- AddForeignKey
ALTER TABLE "AgentRun" ADD CONSTRAINT "AgentRun_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunSession" ADD CONSTRAINT "RunSession_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Trajectory" ADD CONSTRAINT "Trajectory_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TrajectoryWord" ADD CONSTRAINT "TrajectoryWord_agentId_trajectoryId_fkey" FOREIGN KEY ("agentId", "trajectoryId") REFERENCES "Trajectory"("agentId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AppFact" ADD CONSTRAINT "AppFact_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "KnownSelector" ADD CONSTRAINT "KnownSelector_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunHint" ADD CONSTRAINT "RunHint_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunContribution" ADD CONSTRAINT "RunContribution_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;
