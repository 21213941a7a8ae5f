-- AlterTable
ALTER TABLE "OptimizationSnapshot" ADD COLUMN "explanation" TEXT;
