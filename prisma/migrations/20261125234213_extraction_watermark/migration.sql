-- Automatic memory formation (issue 13 §2): each conversation remembers the last message its
-- extraction has read, so a job reads only the turns after it and a restart repeats nothing.
-- AlterTable
ALTER TABLE "Session" ADD COLUMN "extractedThroughId" INTEGER;
