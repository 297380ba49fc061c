"""The time constraint a question states ("in May 2023", "the week before 1 June 2023", "between August 11
and August 15 2023"), abstaining when it states none or is unclear."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from hopgraph.core.dates import (
    ABS,
    DAY_NUMBER,
    ISO_BASIC,
    ISO_BASIC_RE,
    MONTH,
    SEASON,
    SEASON_RE,
    YEAR,
    Interval,
    absolute,
    date_parts,
    day_span,
    month_span,
    season_span,
    week_span,
)

#: events in, before, after, or on or before ("by") a cue's interval
Relation = Literal["in", "before", "after", "by"]


@dataclass(frozen=True)
class TimeCue:
    """A question's time constraint: events in, before, after or by (on or before) ``interval`` (None: only
    ``month`` is known)."""

    relation: Relation
    interval: Interval | None
    month: int | None = None
    expression: str = ""


_QUESTION = re.compile(rf"""\b(?:(?P<rel>before|after|prior\s+to|by|until|till|up\s+to)\s+
      |(?P<prep>in|on|during|of|around|over|from)\s+)?
    (?:the\s+)?(?:month\s+of\s+)?(?P<mod>(?:weekend|week|day)\s+(?:of|before|after)\s+
      |(?:beginning|start|end|middle|(?:first|second)\s+half|(?:first|second|third|fourth|last)\s+week)\s+of\s+
      |(?:early|mid|late)(?:\s+|-))?
    (?P<date>{ABS}|(?<![\w./-]){ISO_BASIC}(?![\w:/-]|\.\w)|{SEASON},?\s+(?:of\s+)?{YEAR}|{MONTH},?\s+(?:of\s+)?{YEAR}|{YEAR}|{MONTH})(?!\w)
""", re.I | re.X)
_PART_OF = {"beginning of": 0, "start of": 0, "early": 0, "middle of": 1, "mid": 1, "end of": 2, "late": 2,
            "first half of": 3, "second half of": 4, "first week of": 5, "second week of": 6, "third week of": 7,
            "fourth week of": 8, "last week of": 9}
#: a question's "before" words, and those that keep the day they name ("by 10 July": on or before it)
_BEFORE: dict[str, Relation] = {"before": "before", "prior to": "before", "by": "by", "until": "by", "till": "by",
                                "up to": "by"}


def _around(mod: str, day: date) -> Interval:
    """``week|weekend|day`` + ``of|before|after`` a day (the week before = the 7 days before it)."""
    unit, where = mod.split()
    if unit == "day":
        return day_span(day + timedelta(days={"of": 0, "before": -1, "after": 1}[where]))
    if unit == "week":
        if where == "of":
            return week_span(day)
        first = day - timedelta(days=7) if where == "before" else day + timedelta(days=1)
        return Interval(first, first + timedelta(days=6))
    sunday = {"before": day - timedelta(days=(day.weekday() - 6) % 7 or 7), "of": week_span(day).end,
              "after": day + timedelta(days=((5 - day.weekday()) % 7 or 7) + 1)}[where]
    return Interval(sunday - timedelta(days=1), sunday)


def _part(part: int, gran: str, span: Interval) -> Interval:
    """The first, middle or last third (days 1-10, 11-20, 21-end; of a year: 4 months), half or, of a month,
    week (days 1-7, 8-14, 15-21, 22-28, the last 7) of a span."""
    if gran == "month":
        first, last = [(1, 10), (11, 20), (21, 31), (1, 15), (16, 31), (1, 7), (8, 14), (15, 21), (22, 28),
                       (span.end.day - 6, 31)][part]
        return Interval(span.start.replace(day=first), span.start.replace(day=min(last, span.end.day)))
    first, last = [(1, 4), (5, 8), (9, 12), (1, 6), (7, 12)][part]
    return Interval(month_span(span.start.year, first).start, month_span(span.start.year, last).end)


def _cue(m: re.Match[str]) -> TimeCue | None:
    """The cue of one candidate, or None when it names no date of a known year (or not clearly)."""
    rel = " ".join((m["rel"] or "").lower().split())
    relation: Relation = "after" if rel == "after" else _BEFORE.get(rel, "in")
    mod = " ".join((m["mod"] or "").lower().replace("-", " ").split())
    text, prep = m["date"], (m["prep"] or "").lower()
    year, month, day = date_parts(text)
    if (season := SEASON_RE.match(text)) and year:
        name = season[0].lower()  # winter 2021: which one?
        found: tuple[str, Interval] | None = None if name == "winter" else ("season", season_span(name, year))
    elif not year:  # "in June": that month of any year
        ok = month and not day and prep in ("in", "during") and not rel and mod in ("", *_PART_OF)
        return TimeCue("in", None, month, m[0].strip()) if ok else None
    elif not (prep or rel or mod) and (not month or ISO_BASIC_RE.fullmatch(text)):
        return None  # a bare number such as "2023" or "20230508"
    else:
        found = absolute(text, None)
    if found is None:
        return None
    gran, span = found
    if mod in _PART_OF and (gran == "month" or (gran == "year" and "week" not in mod)):
        span = _part(_PART_OF[mod], gran, span)
    elif mod and not (gran == "day" and mod not in _PART_OF):
        return None
    elif mod:
        span = _around(mod, span.start)
    return TimeCue(relation, span, None, m[0].strip())


def question_cue(question: str) -> TimeCue | None:
    """The time constraint ``question`` states, or None when it states none or several different ones.

    Only dates of a known year count: days (also in ISO 8601's basic form, ``20230508``), months,
    years, seasons (summer 2021: June-August; winter abstains), parts of a month or year ("the
    beginning|middle|end of" or "early|mid|late": days 1-10|11-20|21-end or 4-month thirds; "the
    first|second half of"), "the week|weekend|day of|before|after" a day (the week before D: the 7 days
    before D), "the first|second|third|fourth|last week of" a month (days 1-7, ..., its last 7);
    "before"/"after" set the relation, "by"/"until" too, keeping the day ("by 10 July 2022": on or before
    it). "in June", "in the month of June", "the second week of June" (no year) give ``month``. Relative
    times ("last year") and events ("after the roadtrip") give None. "between D1 and D2" and "from D1
    to|until|through D2" are one span."""
    if (between := _between(question)) is not None:
        return between
    cues = [cue for m in _QUESTION.finditer(question) if (cue := _cue(m))]
    return cues[0] if cues and len({(c.relation, c.interval, c.month) for c in cues}) == 1 else None


_BARE_DAY = re.compile(rf"(?:the\s+)?({DAY_NUMBER})(?:st|nd|rd|th)?", re.I)
#: the last date of a range starts it ("August 15 2023, at the lake"; not "4 pm on 5 May 2023")
_RANGE_END = re.compile(rf"(?:the\s+)?(?:{ABS}|{ISO_BASIC}|{MONTH},?\s+(?:of\s+)?{YEAR}|{YEAR})(?!\w)", re.I)
_BETWEEN = re.compile(r"\b(?:between|from)\s+(.+?)\s+(?:and|to|until|till|through)\s+(.+?)(?=[?.!;]|$)", re.I)


def _between(question: str) -> TimeCue | None:
    """"between August 11 and August 15 2023", "from 11 to 15 August 2023": one span from the first date to
    the last (the first takes the last's year, and month, when it names none)."""
    m = _BETWEEN.search(question)
    end_text = _RANGE_END.match(m[2]) if m else None
    last = absolute(end_text[0], None) if end_text else None
    if m is None or last is None:
        return None
    end = last[1]
    if bare := _BARE_DAY.fullmatch(m[1].strip()):  # "from 11 to 15 August 2023": the last date's month
        day = int(bare[1])
        first = day_span(end.start.replace(day=day)) if day <= month_span(end.start.year, end.start.month).end.day \
            else None
    else:
        found = absolute(m[1], end.start)
        first = found[1] if found else None
    if first is None or first.start > end.end:
        return None
    return TimeCue("in", Interval(first.start, end.end), expression=m[0])
