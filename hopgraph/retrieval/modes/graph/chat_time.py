"""Time cues over conversations: a question that states a time ("in May 2023", "on 7 July, 2023", "the
week before 1 June 2023", ``core.time_cues.question_cue``) lifts the candidate chunks whose session falls in
it, or whose turns mention a day in it ("yesterday" in a session of 8 May is 7 May). A question with no
cue, and a corpus with no dated conversation, are left as they are; so is a ranking where no candidate
matches (the cue is then taken to be about something the index does not date)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np

from hopgraph.core.time_cues import TimeCue, question_cue
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.trace import Trace


@dataclass(frozen=True)
class ChatTimes:
    """Per chunk row: its session's day (an ordinal, -1 when undated) and the day intervals its turns
    mention (rows ``ptr[j]:ptr[j + 1]`` of ``starts`` and ``ends``)."""

    session_day: np.ndarray
    ptr: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def of(cls, chats: Sequence[str]) -> ChatTimes:
        """From the chunks' stored ``ChatContext`` JSON ('' for a chunk outside a conversation)."""
        day = np.full(len(chats), -1, dtype=np.int64)
        ptr = np.zeros(len(chats) + 1, dtype=np.int64)
        starts: list[int] = []
        ends: list[int] = []
        for j, raw in enumerate(chats):
            if raw:
                ctx = json.loads(raw)
                if ctx.get("session"):
                    day[j] = datetime.fromisoformat(ctx["session"]).date().toordinal()
                for a, b in ctx.get("dates", []):
                    starts.append(date.fromisoformat(a).toordinal())
                    ends.append(date.fromisoformat(b).toordinal())
            ptr[j + 1] = len(starts)
        return cls(day, ptr, np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64))

    @property
    def dated(self) -> bool:
        """Whether any chunk has a dated session."""
        return bool((self.session_day >= 0).any())

    def matching(self, cue: TimeCue) -> np.ndarray:
        """A mask over chunk rows: the session, or a day a turn mentions, meets ``cue``."""
        owner = np.repeat(np.arange(len(self.session_day)), np.diff(self.ptr))
        if cue.interval is None:
            if cue.month is None:
                return np.zeros(len(self.session_day), dtype=bool)
            month = _months(self.session_day) == cue.month
            hit = (_months(self.starts) == cue.month) | (_months(self.ends) == cue.month)
        else:
            a, b = cue.interval.start.toordinal(), cue.interval.end.toordinal()
            dated = self.session_day >= 0
            if cue.relation == "before":
                month, hit = dated & (self.session_day < a), self.ends < a
            elif cue.relation == "by":
                month, hit = dated & (self.session_day <= b), self.starts <= b
            elif cue.relation == "after":
                month, hit = self.session_day > b, self.starts > b
            else:
                month, hit = dated & (self.session_day >= a) & (self.session_day <= b), \
                    (self.starts <= b) & (self.ends >= a)
        out = month.copy()
        out[owner[hit]] = True
        return out


#: the proleptic ordinal of 1970-01-01, numpy's day 0
_EPOCH = date(1970, 1, 1).toordinal()


def _months(days: np.ndarray) -> np.ndarray:
    """The calendar month (1-12) of each day ordinal, 0 where undated (-1)."""
    months = (days - _EPOCH).astype("datetime64[D]").astype("datetime64[M]").astype(np.int64) % 12 + 1
    return np.where(days > 0, months, 0)


def times_of(run: Run) -> ChatTimes:
    """The chat times of the run's index state (derived once per state)."""
    return run.state.memo("chat-times", lambda: ChatTimes.of(run.state.tables.chunks["chat"].tolist()))


#: a question that asks for a time: "When did …", "What date …", "In which year …", "How long ago …"
_ASKS_TIME = re.compile(r"^\s*(?:when\b|(?:on |in )?(?:what|which) (?:date|day|year|month|week)\b"
                        r"|how long ago\b)", re.I)


def time_boost(run: Run, scores: dict[str, float], trace: Trace) -> dict[str, float]:
    """``scores`` with the chunks that meet the question's time cue lifted by ``retrieval.modes.graph.time_weight``
    (each score times 1 + weight, in the ranking's own scale); unchanged without a cue or a match. A
    question asking *when* something happened (no cue) lifts instead, by ``retrieval.modes.graph.when_weight``, the
    chunks whose turns date something ("yesterday", "last May"): where a conversation says when. What matched
goes to ``trace``'s explanation."""
    if not scores:
        return scores
    cue = question_cue(run.text) if run.cfg.modes.graph.time_weight > 0 else None
    asks = cue is None and run.cfg.modes.graph.when_weight > 0 and _ASKS_TIME.match(run.text) is not None
    if cue is None and not asks:
        return scores
    times = times_of(run)
    if not times.dated:
        return scores
    index = run.snap.chunk_index
    if cue is not None:
        mask = times.matching(cue)
        hits = {c for c in scores if mask[index[c]]}
        trace.explain["time_cue"] = {"expression": cue.expression, "relation": cue.relation,
                                     "interval": None if cue.interval is None else
                                     [cue.interval.start.isoformat(), cue.interval.end.isoformat()],
                                     "month": cue.month, "matched": len(hits)}
        weight = run.cfg.modes.graph.time_weight
    else:
        said = np.diff(times.ptr) > 0
        hits = {c for c in scores if said[index[c]]}
        trace.explain["time_asked"] = {"matched": len(hits)}
        weight = run.cfg.modes.graph.when_weight
    if not hits or len(hits) == len(scores):
        return scores
    floor = min(scores.values())
    lift = 1.0 + weight
    return {c: (s - floor) * lift + floor if c in hits else s for c, s in scores.items()}
