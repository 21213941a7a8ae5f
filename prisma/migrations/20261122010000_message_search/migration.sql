-- Full-text index over conversation messages for lexical (BM25) search. An external-content FTS5
-- table: it stores only the index, the text stays in "Message"; triggers keep the two in step.
-- Prisma's schema language cannot describe virtual tables, so prisma.config.ts lists these as
-- external tables and migrations own them.
CREATE VIRTUAL TABLE "MessageSearch" USING fts5(
    content,
    content = 'Message',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

INSERT INTO "MessageSearch" ("rowid", "content") SELECT "id", "content" FROM "Message";

CREATE TRIGGER "Message_search_insert" AFTER INSERT ON "Message" BEGIN
    INSERT INTO "MessageSearch" ("rowid", "content") VALUES (new."id", new."content");
END;

CREATE TRIGGER "Message_search_delete" AFTER DELETE ON "Message" BEGIN
    INSERT INTO "MessageSearch" ("MessageSearch", "rowid", "content") VALUES ('delete', old."id", old."content");
END;

CREATE TRIGGER "Message_search_update" AFTER UPDATE OF "content" ON "Message" BEGIN
    INSERT INTO "MessageSearch" ("MessageSearch", "rowid", "content") VALUES ('delete', old."id", old."content");
    INSERT INTO "MessageSearch" ("rowid", "content") VALUES (new."id", new."content");
END;
