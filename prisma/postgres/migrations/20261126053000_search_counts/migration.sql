-- AlterTable
ALTER TABLE "Knowledge" ADD COLUMN     "searchCounts" JSONB;

-- AlterTable
ALTER TABLE "MemoryItem" ADD COLUMN     "searchCounts" JSONB;

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "searchCounts" JSONB;

-- A tsvector keeps at most 256 positions of a lexeme and clamps positions above 16,383 (merging
-- the duplicates), so a long document's counts can come out short. The client then sends the exact
-- counts of those lexemes ahead of the literal, as one line of JSON (`{"the":300}` + newline +
-- literal; a literal always starts with a quote, and JSON never holds a raw newline): they are
-- stored beside the tsvector, in the same row and statement, and cleared with it, so they can
-- never disagree with it (docs/postgres-redis.md, "Where tsvector loses counts").
CREATE OR REPLACE FUNCTION "engram_search_tokens"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed boolean := TG_OP = 'INSERT';
  col text;
  split integer;
BEGIN
  IF NOT changed THEN
    FOREACH col IN ARRAY TG_ARGV LOOP
      IF to_jsonb(NEW) -> col IS DISTINCT FROM to_jsonb(OLD) -> col THEN
        changed := true;
      END IF;
    END LOOP;
  END IF;
  IF NEW."searchTokens" IS NOT NULL THEN
    IF left(NEW."searchTokens", 1) = '{' THEN
      split := strpos(NEW."searchTokens", E'\n');
      NEW."searchCounts" := left(NEW."searchTokens", split - 1)::jsonb;
      NEW."searchVector" := substr(NEW."searchTokens", split + 1)::tsvector;
    ELSE
      NEW."searchCounts" := NULL;
      NEW."searchVector" := NEW."searchTokens"::tsvector;
    END IF;
    NEW."searchTokens" := NULL;
  ELSIF changed THEN
    NEW."searchVector" := NULL;
    NEW."searchLength" := NULL;
    NEW."searchCounts" := NULL;
  END IF;
  RETURN NEW;
END
$$;
