"""Dates of chat memories (hopgraph.core.dates): session headers, mentions in chat turns, question cues
(hopgraph.core.time_cues)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopgraph.core.dates import DateMention, Interval, date_mentions, session_time
from hopgraph.core.time_cues import TimeCue, question_cue

BASE = date(2023, 5, 8)  # a Monday


def span(start: str, end: str | None = None) -> Interval:
    return Interval(date.fromisoformat(start), date.fromisoformat(end or start))


def only(text: str, base: date = BASE) -> Interval:
    """The interval of the single mention of ``text``."""
    mentions = date_mentions(text, base)
    assert len(mentions) == 1, mentions
    return mentions[0].interval


# --- Interval -----------------------------------------------------------------------------------------
def test_overlaps() -> None:
    may = span("2023-05-01", "2023-05-31")
    assert may.overlaps(span("2023-05-31", "2023-06-02"))
    assert may.overlaps(span("2023-04-01", "2023-05-01"))
    assert may.overlaps(span("2023-05-10"))
    assert span("2023-05-10").overlaps(may)
    assert not may.overlaps(span("2023-06-01", "2023-06-30"))
    assert not may.overlaps(span("2023-04-30"))


# --- session headers ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("header", "expected"), [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
    ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37)),
    ("20260105_11:00", datetime(2026, 1, 5, 11, 0)),
    ("2023-05-08 13:56", datetime(2023, 5, 8, 13, 56)),
    ("2023-05-08T13:56:00+00:00", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("May 8, 2023", datetime(2023, 5, 8)),
    ("8 May 2023", datetime(2023, 5, 8)),
    ("  [8 May 2023]  ", datetime(2023, 5, 8)),
    ("13/05/2023", datetime(2023, 5, 13)),
    ("Monday, 8 May 2023 at 1:56pm", datetime(2023, 5, 8, 13, 56)),  # dateparser's fallback
])
def test_session_time_formats(header: str, expected: datetime) -> None:
    assert session_time(header) == expected


def test_session_time_keeps_the_zone() -> None:
    parsed = session_time("2023-05-08T13:56:00+02:00")
    assert parsed is not None and parsed.utcoffset() is not None and parsed.hour == 13


@pytest.mark.parametrize("header", [
    "1:56 pm on 8 May", "8 May", "05/06/2023", "31/02/2023", "yesterday", "Session 3", "garbage", "", "2023",
])
def test_session_time_abstains(header: str) -> None:
    assert session_time(header) is None


# --- mentions -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "start", "end"), [
    ("I did it yesterday", "2023-05-07", None),
    ("Last night was great", "2023-05-07", None),
    ("today", "2023-05-08", None),
    ("tonight", "2023-05-08", None),
    ("this morning", "2023-05-08", None),
    ("tomorrow", "2023-05-09", None),
    ("the day after tomorrow", "2023-05-10", None),
    ("the day before yesterday", "2023-05-06", None),
    ("last week", "2023-05-01", "2023-05-07"),
    ("this week", "2023-05-08", "2023-05-14"),
    ("next week", "2023-05-15", "2023-05-21"),
    ("last weekend", "2023-05-06", "2023-05-07"),
    ("this weekend", "2023-05-13", "2023-05-14"),
    ("next weekend", "2023-05-20", "2023-05-21"),
    ("last month", "2023-04-01", "2023-04-30"),
    ("this month", "2023-05-01", "2023-05-31"),
    ("next month", "2023-06-01", "2023-06-30"),
    ("last year", "2022-01-01", "2022-12-31"),
    ("this year", "2023-01-01", "2023-12-31"),
    ("next year", "2024-01-01", "2024-12-31"),
    ("last Friday", "2023-05-05", None),
    ("last Monday", "2023-05-01", None),  # base is a Monday: the one before
    ("next Monday", "2023-05-15", None),
    ("next Friday", "2023-05-12", None),
    ("this Sunday", "2023-05-14", None),
    ("3 days ago", "2023-05-05", None),
    ("two days ago", "2023-05-06", None),
    ("a week ago", "2023-05-01", "2023-05-07"),
    ("two weeks ago", "2023-04-24", "2023-04-30"),
    ("a couple of months ago", "2023-03-01", "2023-03-31"),
    ("one year ago", "2022-01-01", "2022-12-31"),
    ("twelve months ago", "2022-05-01", "2022-05-31"),
    ("in 3 days", "2023-05-11", None),
    ("in a couple of days", "2023-05-10", None),
    ("in two weeks", "2023-05-22", "2023-05-28"),
    ("in a month", "2023-06-01", "2023-06-30"),
    ("on 8 May 2023", "2023-05-08", None),
    ("May 8, 2023", "2023-05-08", None),
    ("the 8th of May, 2023", "2023-05-08", None),
    ("2023-04-01", "2023-04-01", None),
    ("May 3", "2023-05-03", None),
    ("Dec 30", "2022-12-30", None),  # nearest to base
    ("May 2023", "2023-05-01", "2023-05-31"),
    ("in May", "2023-05-01", "2023-05-31"),
    ("in June", "2023-06-01", "2023-06-30"),
    ("in December", "2022-12-01", "2022-12-31"),
    ("in 2022", "2022-01-01", "2022-12-31"),
    ("last May", "2022-05-01", "2022-05-31"),
    ("last March", "2023-03-01", "2023-03-31"),
    ("next May", "2024-05-01", "2024-05-31"),
    ("last summer", "2022-06-01", "2022-08-31"),
    ("this summer", "2023-06-01", "2023-08-31"),
    ("last winter", "2022-12-01", "2023-02-28"),
    ("summer of 2021", "2021-06-01", "2021-08-31"),
])
def test_mentions(text: str, start: str, end: str | None) -> None:
    assert only(text) == span(start, end)


def test_mention_offsets_and_order() -> None:
    text = "So yesterday I met Ann, and next week we fly out."
    mentions = date_mentions(text, BASE)
    assert [m.expression for m in mentions] == ["yesterday", "next week"]
    first = mentions[0]
    assert first == DateMention(3, 12, "yesterday", span("2023-05-07"))
    assert text[first.start:first.end] == first.expression


def test_weekday_with_on_follows_the_tense() -> None:
    assert only("We went hiking on Saturday.") == span("2023-05-06")
    assert only("I'll visit her on Tuesday!") == span("2023-05-09")
    assert date_mentions("See you on Friday", BASE) == []  # no tense: abstain
    assert date_mentions("I was going to go on Friday", BASE) == []  # both: abstain
    assert date_mentions("Friday was fun", BASE) == []  # a bare weekday abstains


def test_day_of_month_with_on_follows_the_tense() -> None:
    base = date(2023, 8, 17)
    assert only("I met my teammates on the 15th after my trip", base) == span("2023-08-15")
    assert only("I went there on the 31st", base) == span("2023-07-31")  # the latest 31st before the 17th
    assert only("We will meet on the 20th!", base) == span("2023-08-20")
    assert only("I'll fly out on the 3rd", base) == span("2023-09-03")
    assert only("I'll call on the 31st", date(2023, 9, 5)) == span("2023-10-31")  # September has no 31st
    assert date_mentions("See you on the 8th", base) == []  # no tense: abstain
    assert date_mentions("We were trailing in the 4th quarter", base) == []  # not a day


def test_nearest_year_across_new_year() -> None:
    base = date(2023, 1, 10)
    assert only("on Dec 30", base) == span("2022-12-30")
    assert only("in December", base) == span("2022-12-01", "2022-12-31")
    assert only("last weekend", base) == span("2023-01-07", "2023-01-08")
    assert only("last month", base) == span("2022-12-01", "2022-12-31")
    assert only("this winter", base) == span("2022-12-01", "2023-02-28")


@pytest.mark.parametrize("text", [
    "I went there recently.", "the other day", "See you soon", "a while ago", "some time", "lately",
    "a few days ago", "You may be right", "on 31 April 2023", "summer", "winter 2021", "Friday",
])
def test_mentions_abstain(text: str) -> None:
    assert date_mentions(text, BASE) == []


def test_long_text_without_time_words() -> None:
    text = "The quick brown fox jumps over the lazy dog while talking about things. " * 42
    assert len(text) > 3000
    assert date_mentions(text, BASE) == []


def test_mentions_in_long_text_are_found() -> None:
    filler = "The quick brown fox jumps over the lazy dog. " * 30
    text = filler + "I adopted a cat two weeks ago. " + filler + "We moved in 2022."
    assert [(m.expression, m.interval) for m in date_mentions(text, BASE)] == [
        ("two weeks ago", span("2023-04-24", "2023-04-30")), ("in 2022", span("2022-01-01", "2022-12-31"))]


# --- question cues ------------------------------------------------------------------------------------
def cue(question: str) -> tuple[str, Interval | None, int | None] | None:
    found = question_cue(question)
    return None if found is None else (found.relation, found.interval, found.month)


@pytest.mark.parametrize(("question", "relation", "start", "end"), [
    ("What did Mel paint in May 2023?", "in", "2023-05-01", "2023-05-31"),
    ("What happened on 7 July, 2023?", "in", "2023-07-07", None),
    ("Who called on May 23, 2023?", "in", "2023-05-23", None),
    ("Where did they travel in 2023?", "in", "2023-01-01", "2023-12-31"),
    ("What did Jon buy in January 2022?", "in", "2022-01-01", "2022-01-31"),
    ("Where was Ann in summer 2021?", "in", "2021-06-01", "2021-08-31"),
    ("What happened at the beginning of November 2022?", "in", "2022-11-01", "2022-11-10"),
    ("What did he read in the first half of September 2022?", "in", "2022-09-01", "2022-09-15"),
    ("What happened in mid-June 2023?", "in", "2023-06-11", "2023-06-20"),
    ("What happened at the end of February 2024?", "in", "2024-02-21", "2024-02-29"),
    ("What did she do the week of 23 May 2023?", "in", "2023-05-22", "2023-05-28"),
    ("Where was he the week before 1 June 2023?", "in", "2023-05-25", "2023-05-31"),
    ("What did they do the weekend before 17 July 2023?", "in", "2023-07-15", "2023-07-16"),
    ("What did Ann buy before 1 June 2023?", "before", "2023-06-01", None),
    ("What did Ann buy after 3 May 2023?", "after", "2023-05-03", None),
    ("What did Maria plan to do later on the evening of 7 July, 2023?", "in", "2023-07-07", None),
    ("Why does Adam ask about the basement on 20260907?", "in", "2026-09-07", None),  # ISO 8601 basic
    ("What songs was he working on as of 20260908?", "in", "2026-09-08", None),
    ("What did Ann buy before 20230601?", "before", "2023-06-01", None),
    ("What happened on 2023-05-08?", "in", "2023-05-08", None),
    ("What happened on 20230508.", "in", "2023-05-08", None),
    ("Where was he the week before 20230601?", "in", "2023-05-25", "2023-05-31"),
    ("What changed between 20230508 and 20230601?", "in", "2023-05-08", "2023-06-01"),
    ("What did John do from August 11 to August 15, 2023?", "in", "2023-08-11", "2023-08-15"),
    ("Where was Ann from 11 until 15 August 2023?", "in", "2023-08-11", "2023-08-15"),
    ("Who called from 2 to 4 pm on 5 May 2023?", "in", "2023-05-05", None),  # hours, not days
    ("What did he read between the 3rd and the 9th of May 2023?", "in", "2023-05-03", "2023-05-09"),
    ("How many games had Nate won by July 10, 2022?", "by", "2022-07-10", None),
    ("What had she saved until 3 May 2023?", "by", "2023-05-03", None),
    ("What happened in the second week of November 2023?", "in", "2023-11-08", "2023-11-14"),
    ("What happened in the last week of February 2024?", "in", "2024-02-23", "2024-02-29"),
    ("What did Ann buy between 5 May 2023 (order 20230601) and 9 May 2023?", "in", "2023-05-05", "2023-05-09"),
])
def test_question_cues(question: str, relation: str, start: str, end: str | None) -> None:
    found = question_cue(question)
    assert isinstance(found, TimeCue)
    assert (found.relation, found.interval, found.month) == (relation, span(start, end), None)
    assert found.expression and found.expression in question


def test_question_cue_month_without_year() -> None:
    assert cue("Where did Jon go in June?") == ("in", None, 6)
    assert cue("What did Hailey bake in the month of May?") == ("in", None, 5)
    assert cue("Which country was Tim visiting in the second week of November?") == ("in", None, 11)


@pytest.mark.parametrize("question", [
    "When did Caroline go to the LGBTQ support group?",
    "How long has Mel been painting?",
    "What did Jon do last year?",
    "Where did they go last weekend?",
    "What did they eat after the roadtrip?",
    "What happened on May 8?",  # a day of an unknown year
    "What did the 2023 budget cover?",  # a bare number
    "What did Ann do in winter 2021?",  # which winter?
    "Did she travel before 1 June 2023 or after 3 July 2023?",  # two different cues
    "May I ask what you painted?",
    "What was said on 2026101?",  # seven digits: no day
    "Which order is 20231399?",  # no 13th month
    "What did ticket 202305081 cover?",  # a longer number
    "What is in folder 20230508_1400?",  # an identifier, not a date
    "What did ticket INC-20230508 cover?",
    "Which release is 1.20230508?",
    "What is at path /data/20230508/x?",
    "What was order 20230508 about?",  # a bare number: no preposition
    "What changed between v20230508 and v20230601?",
    "What happened in the second week of 2023?",  # weeks are of months
    "Where did John drive from Chicago to Seattle?",  # places, not dates
])
def test_question_without_cue(question: str) -> None:
    assert question_cue(question) is None


def test_question_cue_between_two_dates_is_one_span() -> None:
    cue = question_cue("Where was John between August 11 and August 15 2023?")
    assert cue is not None and cue.relation == "in"
    assert cue.interval == Interval(date(2023, 8, 11), date(2023, 8, 15))
    assert question_cue("Who sat between Ann and Bob?") is None


WORDS = ("on", "the", "15th", "31st", "29th", "3rd", "between", "from", "to", "and", "by", "until", "May", "June",
         "February", "2023", "2024", "week", "second", "last", "month", "of", "in", "before", "after", "yesterday",
         "I", "went", "will", "20230508", "2023-02-30", "-", ",", "?", "summer", "mid", "end", "next", "ago", "two")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=12), st.dates(date(2001, 1, 1), date(2098, 12, 31)))
def test_any_word_salad_gives_well_formed_spans_or_nothing(words: list[str], base: date) -> None:
    text = " ".join(words)
    for m in date_mentions(text, base):
        assert m.interval.start <= m.interval.end and text[m.start:m.end] == m.expression
    found = question_cue(text)
    if found is not None and found.interval is not None:
        assert found.interval.start <= found.interval.end and found.expression in text
