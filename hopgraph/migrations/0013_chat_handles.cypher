// Chat handles: an entity named by a CamelCase handle ("LiHua", "🌟 HaileyJohnson") merges into the
// person of that name ("Li Hua") since this version. The entities whose name has a lower-case letter
// followed by a capital are marked for resolution again (a condition without a regular expression:
// ArcadeDB aborts one that runs past arcadedb.command.regexTimeout); the next ingest's resolve step
// merges those that are a person's handle and clears the mark.
MATCH (e:Entity)
WHERE e.name IS NOT NULL
  AND any(i IN range(1, size(e.name) - 1)
          WHERE substring(e.name, i - 1, 1) <> toUpper(substring(e.name, i - 1, 1))
            AND substring(e.name, i, 1) <> toLower(substring(e.name, i, 1)))
SET e.resolved = false;
