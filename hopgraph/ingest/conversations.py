"""Conversation structure of a chat log: its sessions and, per chunk, a ``ChatContext``.

A text is a conversation when at least two of its lines start with a speaker tag (``Caroline: …``,
``ingest.speakers``). Its sessions start at header lines that carry a date (``Time: 1:56 pm on 8 May,
2023``, ``Date: 2023-05-08``, ``Session 3: …``) or at lines stamped with one (``[2023-05-08 13:56] Ann:
…``, a new session on each new day). A chunk gets the time of the session it starts in, the speakers of
its turns and the days its turns mention ("yesterday", "last week", "8 May"), resolved against the
session's date by ``core.dates`` (which abstains when unsure). A header or stamp it cannot read is
logged once per document and the text is kept as it is.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from hopgraph.core.dates import date_mentions, session_time
from hopgraph.core.records import ChatContext, Chunk
from hopgraph.graphdb.chat_protocol import ChatDateStore
from hopgraph.ingest.speakers import STAMP, Speaker, speakers

log = logging.getLogger(__name__)

#: a session header: a label, a colon, then its date and time
_HEADER = re.compile(r"^[ \t]*(?:time|date|timestamp|session(?:[ \t]+\d+)?(?:[ \t]+(?:date|time))?)[ \t]*:"
                     r"[ \t]*(\S.*?)[ \t]*$", re.I | re.M)
#: a line's own timestamp before its speaker: "[2023-05-08 13:56] Ann:", "2023-05-08 13:56 - Ann:"
_STAMP = re.compile(rf"^{STAMP}(?=\S)", re.M)


@dataclass(frozen=True)
class Session:
    """A session of a conversation: where it starts in the text and when (None: undated)."""

    start: int
    time: datetime | None


def sessions(text: str, source: str = "", unread: list[str] | None = None) -> list[Session]:
    """The sessions of a chat log in text order (none when it has no header or stamp; an undated one
    where its header cannot be read); ``source`` names the document in the warning about such headers,
    which are also added to ``unread``."""
    found: list[Session] = []
    unread = [] if unread is None else unread
    for m in _HEADER.finditer(text):
        when = session_time(m.group(1))
        if when is None:
            unread.append(m.group(1))
        found.append(Session(m.start(), when))
    if not found:
        day = None
        for m in _STAMP.finditer(text):
            when = session_time(m["time"])
            if when is None:
                unread.append(m["time"])
            elif when.date() != day:
                day = when.date()
                found.append(Session(m.start(), when))
    if unread:
        log.warning("%s: %d session date(s) not understood (kept as text, left undated), e.g. %r",
                    source or "a conversation", len(unread), unread[0][:60])
    return found


def chat_contexts(text: str, chunks: Sequence[Chunk], source: str = "",
                  unread: list[str] | None = None) -> list[Chunk]:
    """``chunks`` (of ``text``, in order) with their ``ChatContext`` when ``text`` is a conversation;
    unchanged otherwise. Session headers it cannot read are added to ``unread``."""
    tags = speakers(text)
    if not tags:
        return list(chunks)
    found = sessions(text, source, unread)
    starts = [s.start for s in found]
    tag_starts = [t.start for t in tags]
    out: list[Chunk] = []
    cursor = 0
    for chunk in chunks:
        at = text.find(chunk.text[:200], cursor)
        if at < 0:
            at = cursor
        cursor = at
        end = at + len(chunk.text)
        k = bisect.bisect_right(starts, at) - 1
        if k < 0 and found and found[0].start < end:  # the chunk holds the first header
            k = 0
        session = found[k].time if k >= 0 else None
        out.append(chunk.model_copy(update={"chat": _context(chunk.text, session, tags, tag_starts, at, end)}))
    return out


def _context(chunk_text: str, session: datetime | None, tags: list[Speaker], tag_starts: list[int],
             start: int, end: int) -> ChatContext:
    lo, hi = bisect.bisect_left(tag_starts, start), bisect.bisect_left(tag_starts, end)
    names = list(dict.fromkeys(t.name for t in tags[lo:hi]))
    if session is None:
        return ChatContext(speakers=names)
    return ChatContext(session=session.isoformat(timespec="minutes"), speakers=names,
                       dates=turn_dates(chunk_text, session.date()))


def turn_dates(chunk_text: str, day: date) -> list[tuple[str, str]]:
    """The days the turns of ``chunk_text`` mention, resolved against its session's ``day``, as inclusive
    ISO intervals in text order (session headers and line stamps are not turns)."""
    said = _STAMP.sub(_blank, _HEADER.sub(_blank, chunk_text))
    return list(dict.fromkeys((m.interval.start.isoformat(), m.interval.end.isoformat())
                              for m in date_mentions(said, day)))


def redated(chunk_text: str, chat_json: str) -> str | None:
    """The chat context JSON of a stored chunk with its ``dates`` resolved again by today's rules
    (``core.dates``) from its text and session; None where it has no session or its dates stay. A
    context that cannot be read (written by hand) is logged and left as it is."""
    if not chat_json:
        return None
    try:
        ctx = ChatContext.model_validate_json(chat_json)
        day = datetime.fromisoformat(ctx.session).date() if ctx.session else None
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        log.warning("a chunk's chat context is not readable, left as it is: %s (%.80r)", exc, chat_json)
        return None
    if day is None:
        return None
    dates = turn_dates(chunk_text, day)
    return None if dates == ctx.dates else ctx.model_copy(update={"dates": dates}).model_dump_json()


def redate(graph: ChatDateStore, batch: int = 200) -> tuple[int, int]:
    """Re-date the turns of the conversations a migration marked (ingested before the dating rules
    changed): each chunk's ``dates`` again from its text and session (``redated``), the changed
    documents committed so that the index state reads them again; nothing is re-chunked or re-embedded.
    Returns how many documents were read and how many chunks changed."""
    documents = changed = 0
    while todo := graph.undated_chats(limit=batch):
        chats: dict[str, str] = {}
        touched: list[str] = []
        for doc, rows in todo.items():
            found = {cid: new for cid, text, chat in rows if (new := redated(text, chat)) is not None}
            if found:
                chats.update(found)
                touched.append(doc)
        if chats:
            graph.write_chat_contexts(chats)
            graph.commit(documents=touched)
        graph.mark_chats_dated(list(todo))
        documents, changed = documents + len(todo), changed + len(chats)
    if documents:
        log.info("re-dated %d conversation(s) stored before the dating rules changed: %d chunk(s) changed",
                 documents, changed)
    return documents, changed


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))
