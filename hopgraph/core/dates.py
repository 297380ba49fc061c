"""Dates in chat memories: a session header's time, a chat turn's time expressions resolved against the
session's date, and the time constraint a question states. Everything abstains rather than guess;
``dateparser`` is imported lazily, only as the last resort of :func:`session_time`."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal


@dataclass(frozen=True)
class Interval:
    """A span of days, both ends inclusive."""

    start: date
    end: date

    def overlaps(self, other: Interval) -> bool:
        """True when the two spans share at least one day."""
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class DateMention:
    """A time expression of a text: its character offsets, its text and the days it names."""

    start: int
    end: int
    expression: str
    interval: Interval


@dataclass(frozen=True)
class TimeCue:
    """A question's time constraint: events in, before or after ``interval`` (None: only ``month`` is known)."""

    relation: Literal["in", "before", "after"]
    interval: Interval | None
    month: int | None = None
    expression: str = ""


# Pattern fragments (``May`` only capitalised: it is also a verb).
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|(?-i:May)|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b(?:\.(?=\s*\d))?")
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\b"
_YEAR = r"(?:19|20)\d\d\b(?!-)"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
_SEASON = r"(?:spring|summer|autumn|fall|winter)\b"
_NUM = r"(?:\d{1,3}|(?:a\s+)?couple\s+of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_ABS = (rf"(?:{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?|{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?"
        r"|\d{4}-\d\d-\d\d\b)")

_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                        "dec"), 1)}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month; 3 months long
_WEEKDAYS = {name: i for i, name in enumerate(("mon", "tue", "wed", "thu", "fri", "sat", "sun"))}
_NUMBERS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                        "ten", "eleven", "twelve"))} | {"a": 1, "an": 1}

_MONTH_RE = re.compile(_MONTH, re.I)
_SEASON_RE = re.compile(_SEASON, re.I)
_YEAR_RE = re.compile(r"\b\d{4}\b")
_DAYNUM_RE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\b")
_ISO_DAY_RE = re.compile(r"(\d{4})-(\d\d)-(\d\d)")
#: ISO 8601's basic form of a day, ``20230508`` (the form of the ``%Y%m%d_%H:%M`` session headers)
_ISO_BASIC = r"((?:19|20)\d\d)(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])"
_ISO_BASIC_RE = re.compile(_ISO_BASIC)
_COUNT_RE = re.compile(rf"\b({_NUM})\s+(day|week|month|year)", re.I)


def _day(d: date) -> Interval:
    """The single day ``d``."""
    return Interval(d, d)


def _month(year: int, month: int) -> Interval:
    """The calendar month ``month`` of ``year``; months outside 1..12 roll over into other years."""
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return Interval(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _year(year: int) -> Interval:
    """The calendar year ``year``."""
    return Interval(date(year, 1, 1), date(year, 12, 31))


def _week(d: date) -> Interval:
    """The Monday-Sunday week that contains ``d``."""
    monday = d - timedelta(days=d.weekday())
    return Interval(monday, monday + timedelta(days=6))


def _season(name: str, year: int) -> Interval:
    """Three months from the season's first month of ``year`` (winter runs December to February)."""
    first = _SEASONS[name]
    return Interval(_month(year, first).start, _month(year, first + 2).end)


def _nearest(spans: list[Interval], base: date) -> Interval | None:
    """The span nearest to ``base`` (distance 0 when it holds ``base``); on a tie the earlier one."""
    return min(spans, key=lambda s: (max((s.start - base).days, (base - s.end).days, 0), s.start), default=None)


def _parts(text: str) -> tuple[int | None, int | None, int | None]:
    """(year, month, day) named in an absolute date expression, each None when absent."""
    if iso := _ISO_DAY_RE.search(text) or _ISO_BASIC_RE.fullmatch(text.strip()):
        return int(iso[1]), int(iso[2]), int(iso[3])
    year = int(y[0]) if (y := _YEAR_RE.search(text)) else None
    month = _MONTHS.get(m[0][:3].lower()) if (m := _MONTH_RE.search(text)) else None
    day = int(d[1]) if (month and (d := _DAYNUM_RE.search(text))) else None
    return year, month, day


def _absolute(text: str, base: date | None) -> tuple[str, Interval] | None:
    """(granularity, span) of an absolute date; with no year, the occurrence nearest ``base`` (or None)."""
    year, month, day = _parts(text)
    years = [year] if year else [base.year - 1, base.year, base.year + 1] if base else []
    if month and day:  # 31 April, 29 February of a common year: no such day
        gran, spans = "day", [_day(date(y, month, day)) for y in years if day <= calendar.monthrange(y, month)[1]]
    elif month:
        gran, spans = "month", [_month(y, month) for y in years]
    else:
        return ("year", _year(year)) if year else None
    found = _nearest(spans, base) if base else spans[0] if spans else None
    return (gran, found) if found else None


_HEADER_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y", "%Y%m%d_%H:%M",
                   "%Y%m%d_%H%M", "%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y", "%d %B, %Y", "%B %d, %Y %H:%M")
_NUMERIC_HEADER = re.compile(r"(\d{1,2})[/.](\d{1,2})[/.](\d{4})(?:[ ,T]+(\d{1,2}):(\d\d))?")
_NUMERIC_ANY = re.compile(r"(?<!\d)\d{1,2}[/.]\d{1,2}[/.]\d")
_HAS_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)|\d{8}")


def session_time(header: str) -> datetime | None:
    """The time of a session header's value ("1:56 pm on 8 May, 2023", "20260105_11:00", ISO 8601, ...), or None
    when it names no year or is ambiguous. ISO and ``strptime`` formats first; numeric d/m dates only when a part
    exceeds 12; else English ``dateparser`` with ``STRICT_PARSING`` if a 4-digit year is named. Zones are kept."""
    text = " ".join(header.strip().strip("[]()").split())
    if _ISO_DAY_RE.match(text):
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            pass
    for fmt in _HEADER_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    if numeric := _NUMERIC_HEADER.fullmatch(text):
        a, b = int(numeric[1]), int(numeric[2])
        day, month = (b, a) if b > 12 else (a, b) if a > 12 or a == b else (0, 0)  # 05/06/2023: May or June?
        try:
            return datetime(int(numeric[3]), month, day, int(numeric[4] or 0), int(numeric[5] or 0))
        except ValueError:  # also day 0: ambiguous
            return None
    if _NUMERIC_ANY.search(text) or not _HAS_YEAR.search(text):
        return None
    import dateparser  # lazily: the CLI starts without it

    return dateparser.parse(text, languages=["en"], settings={"STRICT_PARSING": True})


_MENTION = re.compile(rf"""\b(?:
    (?P<ago>{_NUM}\s+(?:day|week|month|year)s?\s+ago)
  | (?P<later>in\s+{_NUM}\s+(?:day|week|month)s?)
  | (?P<word>the\s+day\s+(?:after\s+tomorrow|before\s+yesterday)|yesterday|today|tonight|tomorrow|last\s+night
      |this\s+(?:morning|afternoon|evening))
  | (?P<rel>(?:last|this|next)\s+(?:weekend|week|month|year|{_SEASON}|{_MONTH}|{_WEEKDAY}))
  | (?P<on>on\s+{_WEEKDAY})
  | (?P<season>{_SEASON}\s+(?:of\s+)?{_YEAR})
  | (?P<abs>{_ABS}|{_MONTH},?\s+(?:of\s+)?{_YEAR}|(?:in|during)\s+(?:{_MONTH}(?!,?\s*\d)|{_YEAR}))
)(?!\w)""", re.I | re.X)
# Every mention holds one of these words: a fast prefilter, run on ASCII-lowercased text (case-blind is slow).
_ANCHOR = re.compile(r"""\b(?=[\dadefjmnostwy])(?:\d|(?:ago|yesterday|today|tonight|tomorrow|night|morning|afternoon
    |evening|(?:day|week|weekend|month|year)s?|spring|summer|autumn|fall|winter|(?:mon|tues|wednes|thurs|fri|satur|sun)day
    |jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?
    |nov(?:ember)?|dec(?:ember)?)\b)""", re.X)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_WORD_OFFSETS = {"the day before yesterday": -2, "yesterday": -1, "last night": -1, "tomorrow": 1,
                 "the day after tomorrow": 2}
_APOSTROPHE = "['\u2019]"
_FUTURE = re.compile(rf"\b(?:will|shall|gonna|going\s+to|plan(?:ning)?\s+to|hope\s+to|can{_APOSTROPHE}t\s+wait"
                     rf"|looking\s+forward)\b|{_APOSTROPHE}ll\b", re.I)
_PAST = re.compile(r"\b(?:was|were|went|did|had|got|saw|made|took|came|met|spent|\w{3,}ed)\b", re.I)
_NOT_PAST = {"excited", "interested", "scheduled", "planned", "supposed", "tired", "need", "speed"}
_SENTENCE_END = re.compile(r"[.!?\n]")


def _tense(text: str, start: int, end: int) -> int:
    """+1 when the sentence around ``text[start:end]`` speaks of the future only, -1 of the past only, else 0."""
    left = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
    sentence = text[left:m.start() if (m := _SENTENCE_END.search(text, end)) else len(text)]
    future = bool(_FUTURE.search(sentence))
    past = any(w.lower() not in _NOT_PAST for w in _PAST.findall(sentence))
    return 0 if future == past else 1 if future else -1


def _weekday(which: str, weekday: int, base: date) -> Interval:
    """last: the latest such day before ``base``; next: the first after it; this: the one in ``base``'s week."""
    if which == "this":
        return _day(_week(base).start + timedelta(days=weekday))
    back = (base.weekday() - weekday) % 7 or 7 if which == "last" else -((weekday - base.weekday()) % 7 or 7)
    return _day(base - timedelta(days=back))


def _relative(which: str, noun: str, base: date) -> Interval | None:
    """``last|this|next`` + week, weekend, month, year, season, month name or weekday, against ``base``."""
    step = {"last": -1, "this": 0, "next": 1}[which]
    if noun == "week":
        return _week(base + timedelta(weeks=step))
    if noun == "weekend":  # the Saturday-Sunday of the week before, of, after base's week
        sunday = _week(base + timedelta(weeks=step)).end
        return Interval(sunday - timedelta(days=1), sunday)
    if noun == "month":
        return _month(base.year, base.month + step)
    if noun == "year":
        return _year(base.year + step)
    if noun.endswith("day"):
        return _weekday(which, _WEEKDAYS[noun[:3]], base)
    if noun in _SEASONS:
        spans = [_season(noun, y) for y in range(base.year - 2, base.year + 2)]  # in order
        if step:
            return [s for s in spans if s.end < base][-1] if step < 0 else next(s for s in spans if s.start > base)
        return next((s for s in spans if s.start <= base <= s.end), _season(noun, base.year))
    month = _MONTHS[noun[:3]]
    shift = {0: month - base.month, 1: (month - base.month) % 12 or 12, -1: -((base.month - month) % 12 or 12)}
    return _month(base.year, base.month + shift[step])


def _resolve(kind: str, expr: str, text: str, start: int, end: int, base: date) -> Interval | None:
    """The span of one candidate expression, or None to abstain."""
    words = " ".join(expr.lower().split())
    if kind == "word":
        return _day(base + timedelta(days=_WORD_OFFSETS.get(words, 0)))
    if kind in ("ago", "later"):
        number, unit = _COUNT_RE.findall(words)[0]
        n = 2 if "couple" in number else int(number) if number.isdigit() else _NUMBERS[number]
        n *= -1 if kind == "ago" else 1
        if unit in ("day", "week"):
            return _day(base + timedelta(days=n)) if unit == "day" else _week(base + timedelta(weeks=n))
        return _month(base.year, base.month + n) if unit == "month" else _year(base.year + n)
    if kind == "rel":
        which, noun = words.split(maxsplit=1)
        return _relative(which, noun, base)
    if kind == "on":
        tense = _tense(text, start, end)
        return _weekday("last" if tense < 0 else "next", _WEEKDAYS[words[3:6]], base) if tense else None
    if kind == "season":
        return None if words.startswith("winter") else _season(words.split()[0], int(words[-4:]))
    found = _absolute(expr, base)
    return found[1] if found else None


def date_mentions(text: str, base: date) -> list[DateMention]:
    """The time expressions of ``text`` resolved against the session date ``base``, in text order.

    Days: today, tonight, this morning, (the day before) yesterday, last night, (the day after) tomorrow,
    "N days ago", "in N days". last/this/next week (Monday-Sunday), weekend (that week's Saturday-Sunday),
    month, year, season, month name ("last May": the latest May before ``base``'s month); "N weeks|months|
    years ago", "in N weeks|months": the week, month or year holding the shifted day. Weekdays need
    last/next/this (this: in ``base``'s week) or "on" in a sentence only in the past (the latest) or only in
    the future (the next). Absolute dates without a year take the occurrence nearest ``base``. Bare
    weekdays, vague words (recently, the other day, a few days ago) and impossible dates give nothing."""
    windows: list[tuple[int, int]] = []  # merged stretches around a word every mention holds; only they are parsed
    for a in _ANCHOR.finditer(text.translate(_ASCII_LOWER)):
        lo, hi = max(a.start() - 48, 0), a.end() + 32
        windows.append((windows.pop()[0] if windows and lo <= windows[-1][1] else lo, hi))
    mentions = []
    for lo, hi in windows:
        for m in _MENTION.finditer(text, lo, hi):
            if m.lastgroup and (span := _resolve(m.lastgroup, m[0], text, m.start(), m.end(), base)):
                mentions.append(DateMention(m.start(), m.end(), m[0], span))
    return mentions


_QUESTION = re.compile(rf"""\b(?:(?P<rel>before|after|prior\s+to)\s+|(?P<prep>in|on|during|of|around|over|from)\s+)?
    (?:the\s+)?(?P<mod>(?:weekend|week|day)\s+(?:of|before|after)\s+
      |(?:beginning|start|end|middle|(?:first|second)\s+half)\s+of\s+|(?:early|mid|late)(?:\s+|-))?
    (?P<date>{_ABS}|(?<![\w./-]){_ISO_BASIC}(?![\w:/-]|\.\w)|{_SEASON},?\s+(?:of\s+)?{_YEAR}|{_MONTH},?\s+(?:of\s+)?{_YEAR}|{_YEAR}|{_MONTH})(?!\w)
""", re.I | re.X)
_PART_OF = {"beginning of": 0, "start of": 0, "early": 0, "middle of": 1, "mid": 1, "end of": 2, "late": 2,
            "first half of": 3, "second half of": 4}


def _around(mod: str, day: date) -> Interval:
    """``week|weekend|day`` + ``of|before|after`` a day (the week before = the 7 days before it)."""
    unit, where = mod.split()
    if unit == "day":
        return _day(day + timedelta(days={"of": 0, "before": -1, "after": 1}[where]))
    if unit == "week":
        if where == "of":
            return _week(day)
        first = day - timedelta(days=7) if where == "before" else day + timedelta(days=1)
        return Interval(first, first + timedelta(days=6))
    sunday = {"before": day - timedelta(days=(day.weekday() - 6) % 7 or 7), "of": _week(day).end,
              "after": day + timedelta(days=((5 - day.weekday()) % 7 or 7) + 1)}[where]
    return Interval(sunday - timedelta(days=1), sunday)


def _part(part: int, gran: str, span: Interval) -> Interval:
    """The first, middle or last third (days 1-10, 11-20, 21-end; of a year: 4 months) or half of a span."""
    if gran == "month":
        first, last = [(1, 10), (11, 20), (21, 31), (1, 15), (16, 31)][part]
        return Interval(span.start.replace(day=first), span.start.replace(day=min(last, span.end.day)))
    first, last = [(1, 4), (5, 8), (9, 12), (1, 6), (7, 12)][part]
    return Interval(_month(span.start.year, first).start, _month(span.start.year, last).end)


def _cue(m: re.Match[str]) -> TimeCue | None:
    """The cue of one candidate, or None when it names no date of a known year (or not clearly)."""
    rel = " ".join((m["rel"] or "").lower().split())
    relation: Literal["in", "before", "after"] = "after" if rel == "after" else "before" if rel else "in"
    mod = " ".join((m["mod"] or "").lower().replace("-", " ").split())
    text, prep = m["date"], (m["prep"] or "").lower()
    year, month, day = _parts(text)
    if (season := _SEASON_RE.match(text)) and year:
        name = season[0].lower()  # winter 2021: which one?
        found: tuple[str, Interval] | None = None if name == "winter" else ("season", _season(name, year))
    elif not year:  # "in June": that month of any year
        ok = month and not day and prep in ("in", "during") and not rel and mod in ("", *_PART_OF)
        return TimeCue("in", None, month, m[0].strip()) if ok else None
    elif not (prep or rel or mod) and (not month or _ISO_BASIC_RE.fullmatch(text)):
        return None  # a bare number such as "2023" or "20230508"
    else:
        found = _absolute(text, None)
    if found is None:
        return None
    gran, span = found
    if mod in _PART_OF and gran in ("month", "year"):
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
    before D); "before"/"after" set the relation. "in June" (no year) gives ``month``. Relative times
    ("last year") and events ("after the roadtrip") give None. "between D1 and D2" is one span."""
    if (between := _between(question)) is not None:
        return between
    cues = [cue for m in _QUESTION.finditer(question) if (cue := _cue(m))]
    return cues[0] if cues and len({(c.relation, c.interval, c.month) for c in cues}) == 1 else None


_BETWEEN = re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)(?=[?.!;]|$)", re.I)


def _between(question: str) -> TimeCue | None:
    """"between August 11 and August 15 2023": one span from the first date to the last (the first takes
    the last's year when it names none)."""
    m = _BETWEEN.search(question)
    last = _absolute(m[2], None) if m else None
    first = _absolute(m[1], last[1].start) if m and last else None
    if m is None or last is None or first is None or first[1].start > last[1].end:
        return None
    return TimeCue("in", Interval(first[1].start, last[1].end), expression=m[0])
