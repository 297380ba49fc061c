"""Conversation structure: sessions and chat contexts (unit), speaker facts in extraction, session links,
time cues over dated chunks, and a conversation ingested and asked a time-bounded question (integration)."""

from __future__ import annotations

import json
import logging
from datetime import date
from pathlib import Path

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.dates import Interval
from hopgraph.core.records import ChatContext, Chunk
from hopgraph.core.settings import ExtractionSettings, Settings
from hopgraph.core.time_cues import TimeCue
from hopgraph.ingest.conversations import chat_contexts, sessions
from hopgraph.retrieval.modes.graph import ChatTimes
from hopgraph.retrieval.parts.session_links import session_links

CHAT = """Time: 1:56 pm on 8 May, 2023
Caroline: I went to a support group yesterday and it was so powerful.
Melanie: Wow, that's cool! I painted a sunrise last week.
Time: 10:00 am on 20 May, 2023
Caroline: I researched adoption agencies today.
Melanie: Good luck with that!
"""


def _chunks(text: str, parts: list[str]) -> list[Chunk]:
    return [Chunk(id=f"c{i}", document_id="d", text=p, ord=i) for i, p in enumerate(parts)]


def test_sessions_start_at_dated_headers() -> None:
    found = sessions(CHAT)
    assert [s.time.date() if s.time else None for s in found] == [date(2023, 5, 8), date(2023, 5, 20)]
    assert found[1].start == CHAT.index("Time: 10:00")


def test_sessions_from_line_stamps_split_by_day() -> None:
    text = ("[2023-05-08 13:56] Ann: hi\n[2023-05-08 14:00] Bob: hello\n"
            "[2023-05-09 09:00] Ann: morning\n[2023-05-09 09:05] Bob: hey\n")
    assert [s.time.date() for s in sessions(text) if s.time] == [date(2023, 5, 8), date(2023, 5, 9)]


def test_unreadable_header_is_warned_and_left_undated(caplog: pytest.LogCaptureFixture) -> None:
    text = "Time: sometime after lunch\nAnn: hi there\nBob: hello\n"
    with caplog.at_level(logging.WARNING, logger="hopgraph.ingest.conversations"):
        found = sessions(text, "chat.txt")
    assert [s.time for s in found] == [None]
    assert "chat.txt" in caplog.text and "not understood" in caplog.text
    chunk = chat_contexts(text, _chunks(text, [text.strip()]))[0]
    assert chunk.chat == ChatContext(speakers=["Ann", "Bob"])  # nothing lost: speakers kept, no date


def test_chat_contexts_give_each_chunk_its_session_speakers_and_resolved_days() -> None:
    first, second = CHAT.split("Time: 10:00")
    chunks = chat_contexts(CHAT, _chunks(CHAT, [first.strip(), ("Time: 10:00" + second).strip()]))
    a, b = chunks[0].chat, chunks[1].chat
    assert a is not None and b is not None
    assert a.session == "2023-05-08T13:56" and b.session == "2023-05-20T10:00"
    assert a.speakers == ["Caroline", "Melanie"]
    assert ("2023-05-07", "2023-05-07") in a.dates  # "yesterday"
    assert ("2023-05-20", "2023-05-20") in b.dates  # "today"


def test_a_text_that_is_no_conversation_is_unchanged() -> None:
    text = "Paris is the capital of France. Time: the fourth dimension."
    chunks = _chunks(text, [text])
    assert chat_contexts(text, chunks) == chunks


def test_speaker_facts_make_relations_of_first_person_turns() -> None:
    from hopgraph.ingest.extraction import SpacyExtractor

    text = "Caroline: I adopted a rescue dog.\nMelanie: I painted a lake sunrise.\n"
    chunk = Chunk(id="c", document_id="d", text=text, ord=0)
    on = SpacyExtractor(ExtractionSettings()).extract([chunk])
    off = SpacyExtractor(ExtractionSettings(speaker_facts=False)).extract([chunk])
    names = {e.id: e.name for e in on.entities.values()}
    facts = {(names[r.source_id], r.type, names[r.target_id]) for r in on.relations if r.type != "co_occurs"}
    assert ("Caroline", "adopt", "rescue dog") in facts
    assert ("Melanie", "paint", "lake sunrise") in facts
    assert not any(names.get(r.source_id) in ("Caroline", "Melanie") for r in off.relations if r.type == "adopt")


def _ctx(session: str, speakers: list[str], dates: list[tuple[str, str]] | None = None) -> str:
    return ChatContext(session=session, speakers=speakers, dates=dates or []).model_dump_json()


def test_session_links_join_consecutive_sessions_of_one_conversation() -> None:
    chats = [_ctx("2023-05-08T10:00", ["A", "B"]), _ctx("2023-05-08T10:00", ["A", "B"]),
             _ctx("2023-06-01T10:00", ["B", "A"]), _ctx("2023-05-20T10:00", ["A", "C"]), ""]
    docs = ["s1", "s1", "s2", "s3", "other"]
    links = session_links(chats, docs).toarray()
    assert links[0, 2] == links[1, 2] == 1.0  # the next session of A and B: one chunk, weight 1
    assert links[2, 0] == links[2, 1] == 0.5  # back to the first: shared among its two chunks
    assert links[:, 3].sum() == 0 and links[3].sum() == 0  # A with C is another conversation
    assert links[4].sum() == 0 and links[0, 1] == 0


def test_chat_times_match_a_cue_by_session_or_by_a_mentioned_day() -> None:
    times = ChatTimes.of([_ctx("2023-05-08T10:00", ["A"]), _ctx("2023-07-02T10:00", ["A"]),
                          _ctx("2023-08-01T10:00", ["A"], [("2023-07-30", "2023-07-30")]), ""])
    july = TimeCue("in", Interval(date(2023, 7, 1), date(2023, 7, 31)))
    assert times.matching(july).tolist() == [False, True, True, False]
    before = TimeCue("before", Interval(date(2023, 6, 1), date(2023, 6, 1)))
    assert times.matching(before).tolist() == [True, False, False, False]
    may_any_year = TimeCue("in", None, month=5)
    assert times.matching(may_any_year).tolist() == [True, False, False, False]
    by_2_july = TimeCue("by", Interval(date(2023, 7, 2), date(2023, 7, 2)))  # on or before: the day itself too
    assert times.matching(by_2_july).tolist() == [True, True, False, False]
    before_2_july = TimeCue("before", Interval(date(2023, 7, 2), date(2023, 7, 2)))
    assert times.matching(before_2_july).tolist() == [True, False, False, False]
    by_30_july = TimeCue("by", Interval(date(2023, 7, 30), date(2023, 7, 30)))  # a day mentioned on 1 August
    assert times.matching(by_30_july).tolist() == [True, True, True, False]


SESSIONS = {
    "may.txt": "Time: 2023-05-14 09:00\nAnn: Yesterday we walked up Mount Tam, a long trail.\n"
               "Bob: Sounds great!\n",
    "july.txt": "Time: 2023-07-16 09:00\nAnn: Back from Lake Tahoe, where we went hiking last weekend.\n"
                "Bob: Lovely, I want to see the lake.\n",
    "june.txt": "Time: 2023-06-11 09:00\nAnn: Work is busy, nothing new.\nBob: Same here, lots of "
                "meetings.\n",
}


def test_a_time_bounded_question_is_answered_from_the_session_in_that_time(
        settings: Settings, embedder: object, tmp_path: Path) -> None:
    folder = tmp_path / "chat"
    folder.mkdir()
    for name, text in SESSIONS.items():
        (folder / name).write_text(text, encoding="utf-8")
    with Platform(settings, embedder=embedder) as p:  # type: ignore[arg-type]
        report = p.ingest([folder])
        question = "Where did Ann go hiking in May 2023?"
        timed = p.query(question, mode="graph", top_k=3, explain=True)
        untimed = p.query(question, mode="graph", top_k=3,
                          retrieval=settings.retrieval.merged({"modes": {"graph": {"time_weight": 0.0}}}))
        plain = p.query("Where did Ann go hiking?", mode="graph", top_k=3, explain=True)
        when = p.query("When did Ann go hiking?", mode="graph", top_k=3, explain=True)
    assert (report.conversations, report.dated_chunks) == (3, 3)
    assert Path(timed.results[0].citation.source).name == "may.txt"
    assert timed.explain["time_cue"]["matched"] >= 1
    assert Path(untimed.results[0].citation.source).name == "july.txt"  # what the cue changed
    assert "time_cue" not in plain.explain and "time_asked" not in plain.explain  # no cue, no change
    assert when.explain["time_asked"]["matched"] == 2  # the chunks that date something: May's and July's
    assert Path(when.results[-1].citation.source).name == "june.txt"


def test_a_day_of_the_month_a_turn_names_answers_a_range_question(
        settings: Settings, embedder: object, tmp_path: Path) -> None:
    folder = tmp_path / "chat"
    folder.mkdir()
    (folder / "aug.txt").write_text("Time: 2023-08-17 19:00\nJohn: I met my teammates on the 15th after my trip.\n"
                                    "Tim: Nice!\n", encoding="utf-8")
    (folder / "sep.txt").write_text("Time: 2023-09-20 19:00\nJohn: I met my teammates at the gym after my trip.\n"
                                    "Tim: Cool!\n", encoding="utf-8")
    with Platform(settings, embedder=embedder) as p:  # type: ignore[arg-type]
        p.ingest([folder])
        chats = [json.loads(c) for c in p.retriever.state().tables.chunks["chat"].tolist() if c]
        found = p.query("Where did John meet his teammates from August 14 to August 16, 2023?", mode="graph",
                        top_k=2, explain=True)
    assert [["2023-08-15", "2023-08-15"]] in [c["dates"] for c in chats]  # "on the 15th", said on 17 August
    assert found.explain["time_cue"]["interval"] == ["2023-08-14", "2023-08-16"]
    assert found.explain["time_cue"]["matched"] == 1
    assert Path(found.results[0].citation.source).name == "aug.txt"


def test_chat_context_is_stored_with_the_chunk(platform: Platform, tmp_path: Path) -> None:
    (tmp_path / "may.txt").write_text(SESSIONS["may.txt"], encoding="utf-8")
    platform.ingest([tmp_path / "may.txt"])
    chats = [json.loads(c) for c in platform.retriever.state().tables.chunks["chat"].tolist() if c]
    assert chats and chats[0]["session"] == "2023-05-14T09:00"
    assert chats[0]["speakers"] == ["Ann", "Bob"]
    assert ["2023-05-13", "2023-05-13"] in chats[0]["dates"]  # "yesterday"


def test_fact_verbs_match_a_question_word_with_a_short_ending() -> None:
    from hopgraph.retrieval.modes.graph import verb_matches

    words = {"what", "has", "melanie", "painted"}
    assert verb_matches("paint", words)
    assert not verb_matches("pain", {"painters"})  # more than a short ending
    assert not verb_matches("have", {"have"})      # a light verb never matches


def test_typed_relations_by_source_leave_co_occurrences_out() -> None:
    import numpy as np

    from hopgraph.retrieval.modes.graph import TypedOut

    names = np.array(["co_occurs", "paint", "go_to"], dtype=object)
    out = TypedOut.of(np.array([0, 0, 2, 0]), np.array([1, 2, 0, 3]), np.array([1, 0, 2, 2]), names, 4)
    assert out.ptr.tolist() == [0, 2, 2, 3, 3]
    assert out.targets.tolist() == [1, 3, 0] and out.verbs.tolist() == ["paint", "go", "go"]


def test_a_question_using_a_speakers_verb_finds_the_turn_stating_it(platform: Platform, tmp_path: Path) -> None:
    (tmp_path / "art.txt").write_text("Time: 2023-05-14 09:00\nMelanie: I painted a lake sunrise last year.\n"
                                      "Caroline: That is lovely!\n", encoding="utf-8")
    (tmp_path / "run.txt").write_text("Time: 2023-05-20 09:00\nMelanie: We ran a charity race for the shelter.\n"
                                      "Caroline: So proud of you!\n", encoding="utf-8")
    platform.ingest([tmp_path])
    found = platform.query("What has Melanie painted?", mode="graph", top_k=2, explain=True)
    facts = found.explain["signals"].get("facts", {})
    assert list(facts) == [found.results[0].citation.chunk_id]  # Melanie -paint-> lake sunrise
    assert Path(found.results[0].citation.source).name == "art.txt"
    off = platform.query("What has Melanie painted?", mode="graph", top_k=2, explain=True,
                         retrieval=platform.settings.retrieval.merged({"modes": {"graph": {"fact_weight": 0.0}}}))
    assert "facts" not in off.explain["signals"]


def test_headers_and_stamps_are_no_dates_a_turn_mentions() -> None:
    text = "Time: 2023-06-11 09:00\nAnn: Work is busy.\nBob: Same here.\n"
    chat = chat_contexts(text, _chunks(text, [text.strip()]))[0].chat
    assert chat is not None and chat.session == "2023-06-11T09:00" and chat.dates == []
    stamped = "[2023-05-08 13:56] Ann: hi\n[2023-05-08 14:00] Bob: see you tomorrow\n"
    chat = chat_contexts(stamped, _chunks(stamped, [stamped.strip()]))[0].chat
    assert chat is not None and chat.dates == [("2023-05-09", "2023-05-09")]
