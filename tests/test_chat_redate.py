"""Re-dating stored conversations (``ingest.conversations.redate``): the turns of chunks whose documents a
migration marked get their dates again from their text and session, the change reaches the index state,
and the mark goes (unit, on the in-memory store); on ArcadeDB, a store from before a dating rule is
migrated and the next ingest, with nothing changed, re-dates it in place (integration)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.records import ChatContext, Chunk, Document
from hopgraph.core.settings import Settings
from hopgraph.graphdb.migrations import discover, packaged
from hopgraph.ingest.conversations import redate, redated
from hopgraph.testing import MemoryGraphStore

SAID = "John: I met my teammates on the 15th after my trip."
STALE = ChatContext(session="2023-08-17T19:00", speakers=["John"])  # dated before "on the 15th" was a day


def test_redated_resolves_the_turns_again_and_abstains_without_a_session() -> None:
    again = redated(SAID, STALE.model_dump_json())
    assert again is not None and ChatContext.model_validate_json(again).dates == [("2023-08-15", "2023-08-15")]
    assert ChatContext.model_validate_json(again).speakers == ["John"]  # the rest of the context stays
    assert redated(SAID, again) is None                                   # dated by today's rules: no change
    assert redated(SAID, ChatContext(speakers=["John"]).model_dump_json()) is None  # undated session
    assert redated("A plain chunk.", "") is None                          # no conversation


@pytest.mark.parametrize("chat", ['{"session": "next Tuesday"}', '{"dates": 3}', "{not json"])
def test_an_unreadable_chat_context_is_warned_about_and_left(chat: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="hopgraph.ingest.conversations"):
        assert redated(SAID, chat) is None
    assert "not readable" in caplog.text


def test_marked_conversations_are_redated_committed_and_unmarked() -> None:
    graph = MemoryGraphStore()
    graph.upsert_documents([Document(id=f"doc_{k}", source=f"/{k}.txt", content_hash=k) for k in "abc"],
                           status="complete")
    graph.upsert_chunks([Chunk(id="a0", document_id="doc_a", text=SAID, ord=0, chat=STALE),
                         Chunk(id="a1", document_id="doc_a", text="Tim: Nice!", ord=1, chat=STALE),
                         Chunk(id="b0", document_id="doc_b", text="Ann: Hi.", ord=0, chat=ChatContext())])
    graph.undated |= {"doc_a", "doc_b", "doc_c"}  # as the migration leaves them (doc_c: no chunks left)
    version = graph.version()

    assert redate(graph, batch=2) == (3, 1)
    assert graph.chunks["a0"].chat is not None and graph.chunks["a0"].chat.dates == [("2023-08-15", "2023-08-15")]
    assert graph.chunks["a1"].chat == STALE and graph.chunks["b0"].chat == ChatContext()
    assert [c.documents for c in graph.changes_since(version) or []] == [("doc_a",)]  # only what changed
    assert graph.undated == set() and redate(graph) == (0, 0)


def test_a_store_from_before_a_dating_rule_is_redated_by_the_next_ingest(
        settings: Settings, embedder: object, tmp_path: Path) -> None:
    folder = tmp_path / "chat"
    folder.mkdir()
    (folder / "aug.txt").write_text(f"Time: 2023-08-17 19:00\n{SAID}\nTim: Nice!\n", encoding="utf-8")
    (folder / "sep.txt").write_text("Time: 2023-09-20 19:00\nJohn: I met my teammates at the gym after my trip.\n"
                                    "Tim: Cool!\n", encoding="utf-8")
    question = "Where did John meet his teammates from August 14 to August 16, 2023?"
    with Platform(settings, embedder=embedder) as p:  # type: ignore[arg-type]
        p.ingest([folder])

        def write(statement: str, **params: object) -> None:
            p._store._write(lambda tx: tx.run(statement, params).consume())  # type: ignore[attr-defined]

        # the store as an older version left it: the turn's "on the 15th" undated, then the migration
        write("MATCH (c:Chunk) WHERE c.chat_json CONTAINS '2023-08-17' SET c.chat_json = $old",
              old=STALE.model_dump_json())
        p._store.commit(documents=[d.id for d in p.documents()])  # the served state reads it
        for statement in next(m for m in discover(packaged()) if m.name == "chat_dates").statements:
            write(statement)
        marked = p._store.read("MATCH (d:Document) WHERE d.chats_dated = false RETURN d.id AS id")
        before = p.query(question, mode="graph", top_k=2, explain=True)

        report = p.ingest([folder])  # nothing changed on disk: no document is ingested again
        chats = [json.loads(c) for c in p.retriever.state().tables.chunks["chat"].tolist() if c]
        after = p.query(question, mode="graph", top_k=2, explain=True)
        left = p._store.read("MATCH (d:Document) WHERE d.chats_dated = false RETURN d.id AS id")

    assert len(marked) == 2 and before.explain["time_cue"]["matched"] == 0
    assert report.documents_ingested == 0 and report.documents_unchanged == 2 and report.redated_chunks == 1
    assert [["2023-08-15", "2023-08-15"]] in [c["dates"] for c in chats]
    assert after.explain["time_cue"]["matched"] == 1 and left == []
    assert Path(after.results[0].citation.source).name == "aug.txt"
