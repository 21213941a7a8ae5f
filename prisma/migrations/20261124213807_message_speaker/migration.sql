-- Speakers as a structured field (issue 11): who said a message, so search can leave participants'
-- names out of lexical matching and boost the turns of the participant a query names.
-- AlterTable
ALTER TABLE "Message" ADD COLUMN "speaker" TEXT;

-- CreateIndex
CREATE INDEX "Message_agentId_speaker_idx" ON "Message"("agentId", "speaker");

-- Messages stored before the column named their speaker in metadata, as new writes still may: the
-- same rule fills it in. The first of metadata.speaker and metadata.name that is a string with
-- more than whitespace decides, trimmed of what JavaScript's trim() removes. Where a write would
-- refuse it (past 128 UTF-16 units) it is left out: a migration cannot refuse. SQLite counts code
-- points, so a value passes when it has at most 64 of them or at most 128 UTF-8 bytes, either of
-- which keeps it within 128 UTF-16 units.
WITH "Whitespace" ("chars") AS (
    SELECT char(9, 10, 11, 12, 13, 32, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198, 8199, 8200,
                8201, 8202, 8232, 8233, 8239, 8287, 12288, 65279)
),
"Named" ("id", "bySpeaker", "byName") AS (
    SELECT m."id",
        trim(CASE json_type(m."metadata", '$.speaker') WHEN 'text' THEN json_extract(m."metadata", '$.speaker') END, w."chars"),
        trim(CASE json_type(m."metadata", '$.name') WHEN 'text' THEN json_extract(m."metadata", '$.name') END, w."chars")
    FROM "Message" m CROSS JOIN "Whitespace" w
    WHERE json_valid(m."metadata")
),
"Chosen" ("id", "speaker") AS (
    SELECT "id", CASE WHEN "bySpeaker" <> '' THEN "bySpeaker" WHEN "byName" <> '' THEN "byName" END
    FROM "Named"
)
UPDATE "Message" SET "speaker" = "Chosen"."speaker"
FROM "Chosen"
WHERE "Chosen"."id" = "Message"."id"
    AND (length("Chosen"."speaker") <= 64 OR length(CAST("Chosen"."speaker" AS BLOB)) <= 128);
