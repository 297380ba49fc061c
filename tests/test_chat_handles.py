"""A chat handle written in a turn ("rye bread from HaileyJohnson") is the person of that name: entity
resolution merges it into the speaker's PERSON (``ingest.resolution``, kind ``handle``), and a store from
before the rule is merged by the next ingest once migration ``0013_chat_handles`` has marked it."""

from __future__ import annotations

from pathlib import Path

from hopgraph.app.platform import Platform
from hopgraph.core.settings import ResolutionSettings, Settings
from hopgraph.graphdb.migrations import discover, packaged

MENTIONED = "Time: 2026-01-24 09:00\nWolfgangSchulz: I tried the rye bread from HaileyJohnson yesterday.\n" \
            "LiHua: Told you! Her bakery is the best in town.\n"
SPEAKS = "Time: 2026-01-23 17:00\nHaileyJohnson: The new rye bread is ready for delivery tomorrow morning!\n" \
         "LiHua: Great, I will tell Wolfgang about it.\n"
ENTITIES = "MATCH (e:Entity) RETURN e.name AS name, e.aliases AS aliases"
HAILEY = "MATCH (c:Chunk)-[:MENTIONS]->(:Entity {name: 'Hailey Johnson'}) RETURN count(DISTINCT c) AS n"


def _chats(tmp_path: Path) -> Path:
    folder = tmp_path / "chat"
    folder.mkdir()
    (folder / "jan24.txt").write_text(MENTIONED, encoding="utf-8")
    (folder / "jan23.txt").write_text(SPEAKS, encoding="utf-8")
    return folder


def test_a_handle_in_a_turn_joins_the_person(settings: Settings, embedder: object, tmp_path: Path) -> None:
    with Platform(settings, embedder=embedder) as p:  # type: ignore[arg-type]
        report = p.ingest([_chats(tmp_path)])
        names = {r["name"]: r["aliases"] for r in p._store.read(ENTITIES)}
        chunks = p._store.read(HAILEY)[0]["n"]
    assert report.entities_merged >= 1
    assert "HaileyJohnson" not in names and "HaileyJohnson" in (names["Hailey Johnson"] or [])
    assert chunks == 2  # the turn that names her by her handle, and her own turn


def test_a_store_from_before_the_rule_is_merged_by_the_next_ingest(settings: Settings, embedder: object,
                                                                  tmp_path: Path) -> None:
    folder = _chats(tmp_path)
    before = settings.model_copy(update={"resolution": ResolutionSettings(enabled=False)})
    with Platform(before, embedder=embedder) as p:  # type: ignore[arg-type]
        p.ingest([folder])

        def write(statement: str) -> None:
            p._store._write(lambda tx: tx.run(statement).consume())  # type: ignore[attr-defined]

        write("MATCH (e:Entity) SET e.resolved = true")  # as an older version's resolution left them
    with Platform(settings, embedder=embedder) as p:  # type: ignore[arg-type]
        again = p.ingest([folder])  # nothing marked: the handle stays
        kept = {r["name"] for r in p._store.read(ENTITIES)}
        for statement in next(m for m in discover(packaged()) if m.name == "chat_handles").statements:
            p._store._write(lambda tx, s=statement: tx.run(s).consume())  # type: ignore[attr-defined]
        report = p.ingest([folder])
        names = {r["name"]: r["aliases"] for r in p._store.read(ENTITIES)}
        chunks = p._store.read(HAILEY)[0]["n"]
    assert again.entities_merged == 0 and "HaileyJohnson" in kept
    assert report.documents_ingested == 0 and report.entities_merged >= 1
    assert "HaileyJohnson" not in names and "HaileyJohnson" in (names["Hailey Johnson"] or []) and chunks == 2
