-- Speakers as a structured field (issue 11): who said a message, so search can leave participants'
-- names out of lexical matching and boost the turns of the participant a query names.
-- AlterTable
ALTER TABLE "Message" ADD COLUMN "speaker" TEXT;

-- CreateIndex
CREATE INDEX "Message_agentId_speaker_idx" ON "Message"("agentId", "speaker");

-- Messages stored before the column named their speaker in metadata, as new writes still may: the
-- same rule fills it in, metadata.speaker before metadata.name, trimmed of what JavaScript's trim()
-- removes. A value a write would refuse (blank, or past 128 UTF-16 units) is left out: a migration
-- cannot refuse. SQLite counts code points, so a value passes when it has at most 64 of them or at
-- most 128 UTF-8 bytes, either of which keeps it within 128 UTF-16 units.
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
"Fitting" ("id", "speaker") AS (
    SELECT "id", COALESCE(
        CASE WHEN "bySpeaker" <> '' AND (length("bySpeaker") <= 64 OR length(CAST("bySpeaker" AS BLOB)) <= 128) THEN "bySpeaker" END,
        CASE WHEN "byName" <> '' AND (length("byName") <= 64 OR length(CAST("byName" AS BLOB)) <= 128) THEN "byName" END
    )
    FROM "Named"
)
UPDATE "Message" SET "speaker" = "Fitting"."speaker"
FROM "Fitting"
WHERE "Fitting"."id" = "Message"."id" AND "Fitting"."speaker" IS NOT NULL;
