"""Dates in chat memories: a session header's time and a chat turn's time expressions resolved against the
session's date (a question's time constraint: ``core.time_cues``). Everything abstains rather than guess;
``dateparser`` is imported lazily, only as the last resort of :func:`session_time`.

Chunks store the days their turns mention (``ChatContext.dates``): a change of :func:`date_mentions`' rules
ships a migration that marks the stored conversations (as ``0012_chat_dates`` does), and the next ingest
dates their turns again (``ingest.conversations.redate``)."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta


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


# Pattern fragments (``May`` only capitalised: it is also a verb).
MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|(?-i:May)|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b(?:\.(?=\s*\d))?")
DAY_NUMBER = r"(?:[12]\d|3[01]|0?[1-9])"  # 1-31
_DAY = rf"{DAY_NUMBER}(?:st|nd|rd|th)?\b"
YEAR = r"(?:19|20)\d\d\b(?!-)"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
SEASON = r"(?:spring|summer|autumn|fall|winter)\b"
_NTH = rf"{DAY_NUMBER}(?:st|nd|rd|th)\b"  # a day of the month, "the 15th"
_NUM = r"(?:\d{1,3}|(?:a\s+)?couple\s+of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
ABS = (rf"(?:{_DAY}\s+(?:of\s+)?{MONTH}(?:,?\s+{YEAR})?|{MONTH}\s+{_DAY}(?:,?\s+{YEAR})?"
        r"|\d{4}-\d\d-\d\d\b)")

_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                        "dec"), 1)}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month; 3 months long
_WEEKDAYS = {name: i for i, name in enumerate(("mon", "tue", "wed", "thu", "fri", "sat", "sun"))}
_NUMBERS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                        "ten", "eleven", "twelve"))} | {"a": 1, "an": 1}

_MONTH_RE = re.compile(MONTH, re.I)
SEASON_RE = re.compile(SEASON, re.I)
_YEAR_RE = re.compile(r"\b\d{4}\b")
_DAYNUM_RE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\b")
_ISO_DAY_RE = re.compile(r"(\d{4})-(\d\d)-(\d\d)")
#: ISO 8601's basic form of a day, ``20230508`` (the form of the ``%Y%m%d_%H:%M`` session headers)
ISO_BASIC = r"((?:19|20)\d\d)(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])"
ISO_BASIC_RE = re.compile(ISO_BASIC)
_COUNT_RE = re.compile(rf"\b({_NUM})\s+(day|week|month|year)", re.I)


def day_span(d: date) -> Interval:
    """The single day ``d``."""
    return Interval(d, d)


def month_span(year: int, month: int) -> Interval:
    """The calendar month ``month`` of ``year``; months outside 1..12 roll over into other years."""
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return Interval(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _year(year: int) -> Interval:
    """The calendar year ``year``."""
    return Interval(date(year, 1, 1), date(year, 12, 31))


def week_span(d: date) -> Interval:
    """The Monday-Sunday week that contains ``d``."""
    monday = d - timedelta(days=d.weekday())
    return Interval(monday, monday + timedelta(days=6))


def season_span(name: str, year: int) -> Interval:
    """Three months from the season's first month of ``year`` (winter runs December to February)."""
    first = _SEASONS[name]
    return Interval(month_span(year, first).start, month_span(year, first + 2).end)


def _nearest(spans: list[Interval], base: date) -> Interval | None:
    """The span nearest to ``base`` (distance 0 when it holds ``base``); on a tie the earlier one."""
    return min(spans, key=lambda s: (max((s.start - base).days, (base - s.end).days, 0), s.start), default=None)


def date_parts(text: str) -> tuple[int | None, int | None, int | None]:
    """(year, month, day) named in an absolute date expression, each None when absent."""
    if iso := _ISO_DAY_RE.search(text) or ISO_BASIC_RE.fullmatch(text.strip()):
        return int(iso[1]), int(iso[2]), int(iso[3])
    year = int(y[0]) if (y := _YEAR_RE.search(text)) else None
    month = _MONTHS.get(m[0][:3].lower()) if (m := _MONTH_RE.search(text)) else None
    day = int(d[1]) if (month and (d := _DAYNUM_RE.search(text))) else None
    return year, month, day


def absolute(text: str, base: date | None) -> tuple[str, Interval] | None:
    """(granularity, span) of an absolute date; with no year, the occurrence nearest ``base`` (or None)."""
    year, month, day = date_parts(text)
    years = [year] if year else [base.year - 1, base.year, base.year + 1] if base else []
    if month and day:  # 31 April, 29 February of a common year: no such day
        gran, spans = "day", [day_span(date(y, month, day)) for y in years if day <= calendar.monthrange(y, month)[1]]
    elif month:
        gran, spans = "month", [month_span(y, month) for y in years]
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
  | (?P<rel>(?:last|this|next)\s+(?:weekend|week|month|year|{SEASON}|{MONTH}|{_WEEKDAY}))
  | (?P<on>on\s+{_WEEKDAY})
  | (?P<nth>on\s+the\s+{_NTH})
  | (?P<season>{SEASON}\s+(?:of\s+)?{YEAR})
  | (?P<abs>{ABS}|{MONTH},?\s+(?:of\s+)?{YEAR}|(?:in|during)\s+(?:{MONTH}(?!,?\s*\d)|{YEAR}))
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
        return day_span(week_span(base).start + timedelta(days=weekday))
    back = (base.weekday() - weekday) % 7 or 7 if which == "last" else -((weekday - base.weekday()) % 7 or 7)
    return day_span(base - timedelta(days=back))


def _day_of_month(day: int, tense: int, base: date) -> Interval | None:
    """Day ``day`` of a month: in the past (-1) the latest on or before ``base``, in the future (+1) the first on
    or after it; None with no tense, or where no month near ``base`` has that day."""
    if not tense:
        return None
    spans = [month_span(base.year, base.month + k) for k in (-2, -1, 0, 1, 2)]
    days = [s.start.replace(day=day) for s in spans if day <= s.end.day]
    found = [d for d in days if (d <= base if tense < 0 else d >= base)]
    return day_span(found[-1] if tense < 0 else found[0]) if found else None


def _relative(which: str, noun: str, base: date) -> Interval | None:
    """``last|this|next`` + week, weekend, month, year, season, month name or weekday, against ``base``."""
    step = {"last": -1, "this": 0, "next": 1}[which]
    if noun == "week":
        return week_span(base + timedelta(weeks=step))
    if noun == "weekend":  # the Saturday-Sunday of the week before, of, after base's week
        sunday = week_span(base + timedelta(weeks=step)).end
        return Interval(sunday - timedelta(days=1), sunday)
    if noun == "month":
        return month_span(base.year, base.month + step)
    if noun == "year":
        return _year(base.year + step)
    if noun.endswith("day"):
        return _weekday(which, _WEEKDAYS[noun[:3]], base)
    if noun in _SEASONS:
        spans = [season_span(noun, y) for y in range(base.year - 2, base.year + 2)]  # in order
        if step:
            return [s for s in spans if s.end < base][-1] if step < 0 else next(s for s in spans if s.start > base)
        return next((s for s in spans if s.start <= base <= s.end), season_span(noun, base.year))
    month = _MONTHS[noun[:3]]
    shift = {0: month - base.month, 1: (month - base.month) % 12 or 12, -1: -((base.month - month) % 12 or 12)}
    return month_span(base.year, base.month + shift[step])


def _resolve(kind: str, expr: str, text: str, start: int, end: int, base: date) -> Interval | None:
    """The span of one candidate expression, or None to abstain."""
    words = " ".join(expr.lower().split())
    if kind == "word":
        return day_span(base + timedelta(days=_WORD_OFFSETS.get(words, 0)))
    if kind in ("ago", "later"):
        number, unit = _COUNT_RE.findall(words)[0]
        n = 2 if "couple" in number else int(number) if number.isdigit() else _NUMBERS[number]
        n *= -1 if kind == "ago" else 1
        if unit in ("day", "week"):
            return day_span(base + timedelta(days=n)) if unit == "day" else week_span(base + timedelta(weeks=n))
        return month_span(base.year, base.month + n) if unit == "month" else _year(base.year + n)
    if kind == "rel":
        which, noun = words.split(maxsplit=1)
        return _relative(which, noun, base)
    if kind == "on":
        tense = _tense(text, start, end)
        return _weekday("last" if tense < 0 else "next", _WEEKDAYS[words[3:6]], base) if tense else None
    if kind == "nth":
        return _day_of_month(int(_DAYNUM_RE.findall(words)[0]), _tense(text, start, end), base)
    if kind == "season":
        return None if words.startswith("winter") else season_span(words.split()[0], int(words[-4:]))
    found = absolute(expr, base)
    return found[1] if found else None


def date_mentions(text: str, base: date) -> list[DateMention]:
    """The time expressions of ``text`` resolved against the session date ``base``, in text order.

    Days: today, tonight, this morning, (the day before) yesterday, last night, (the day after) tomorrow,
    "N days ago", "in N days". last/this/next week (Monday-Sunday), weekend (that week's Saturday-Sunday), month,
    year, season, month name ("last May": the latest May before ``base``'s month); "N weeks|months|years ago", "in
    N weeks|months": the week, month or year holding the shifted day. Weekdays need last/next/this (this: in
    ``base``'s week) or "on" in a sentence only in the past (the latest) or only in the future (the next); so does a
    day of the month ("on the 15th"). Absolute dates without a year take the occurrence nearest ``base``. Bare
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
