-- AlterTable
ALTER TABLE "Knowledge" ADD COLUMN     "searchLength" INTEGER,
ADD COLUMN     "searchTokens" TEXT,
ADD COLUMN     "searchVector" tsvector;

-- AlterTable
ALTER TABLE "MemoryItem" ADD COLUMN     "searchLength" INTEGER,
ADD COLUMN     "searchTokens" TEXT,
ADD COLUMN     "searchVector" tsvector;

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "searchLength" INTEGER,
ADD COLUMN     "searchTokens" TEXT,
ADD COLUMN     "searchVector" tsvector;

-- CreateIndex
CREATE INDEX "Knowledge_searchVector_idx" ON "Knowledge" USING GIN ("searchVector");

-- CreateIndex
CREATE INDEX "Knowledge_unindexed_idx" ON "Knowledge"("agentId") WHERE ("searchVector" IS NULL);

-- CreateIndex
CREATE INDEX "MemoryItem_searchVector_idx" ON "MemoryItem" USING GIN ("searchVector");

-- CreateIndex
CREATE INDEX "MemoryItem_unindexed_idx" ON "MemoryItem"("agentId") WHERE ("searchVector" IS NULL);

-- CreateIndex
CREATE INDEX "Message_searchVector_idx" ON "Message" USING GIN ("searchVector");

-- CreateIndex
CREATE INDEX "Message_unindexed_idx" ON "Message"("agentId") WHERE ("searchVector" IS NULL);

-- The application tokenises with FTS5's own tokenizer (the SQLite path's tokens, so BM25 counts
-- agree; see docs/postgres-redis.md) and hands the tokens over as a tsvector literal in
-- "searchTokens" in the statement that writes the text. This trigger moves them into
-- "searchVector" (the literal is parsed as is: no configuration, no dictionary) and clears the
-- text column. A write of the indexed text without tokens (a raw statement) marks the row
-- unindexed (searchVector null): search indexes such rows of the agent before it reads, so no
-- document is ever missing from a search, only late in being tokenised.
CREATE FUNCTION "engram_search_tokens"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed boolean := TG_OP = 'INSERT';
  col text;
BEGIN
  IF NOT changed THEN
    FOREACH col IN ARRAY TG_ARGV LOOP
      IF to_jsonb(NEW) -> col IS DISTINCT FROM to_jsonb(OLD) -> col THEN
        changed := true;
      END IF;
    END LOOP;
  END IF;
  IF NEW."searchTokens" IS NOT NULL THEN
    NEW."searchVector" := NEW."searchTokens"::tsvector;
    NEW."searchTokens" := NULL;
  ELSIF changed THEN
    NEW."searchVector" := NULL;
    NEW."searchLength" := NULL;
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "Message_search_tokens" BEFORE INSERT OR UPDATE ON "Message"
  FOR EACH ROW EXECUTE FUNCTION "engram_search_tokens"('content');
CREATE TRIGGER "MemoryItem_search_tokens" BEFORE INSERT OR UPDATE ON "MemoryItem"
  FOR EACH ROW EXECUTE FUNCTION "engram_search_tokens"('content', 'tags');
CREATE TRIGGER "Knowledge_search_tokens" BEFORE INSERT OR UPDATE ON "Knowledge"
  FOR EACH ROW EXECUTE FUNCTION "engram_search_tokens"('key', 'value');
