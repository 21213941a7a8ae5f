-- A summary's vectors go with it (issue 13 §3: summaries are embedded like memories), whether it
-- is removed by the retention cleanup, with its conversation (the session's cascade) or its agent.
CREATE TRIGGER "Summary_embedding_delete" AFTER DELETE ON "Summary" BEGIN
    DELETE FROM "Embedding" WHERE "kind" = 'summary' AND "ownerId" = old."id";
END;
