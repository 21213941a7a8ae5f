-- Spec 001 sensitive-data policy per agent. Added in place: the generated table rebuild would
-- drop "Agent", and its cascades would empty every table that refers to it.
ALTER TABLE "Agent" ADD COLUMN "privacyMode" TEXT NOT NULL DEFAULT 'redact';
ALTER TABLE "Agent" ADD COLUMN "privacyPatterns" TEXT NOT NULL DEFAULT '[]';
