"""Speaker tags of chat logs and transcripts: ``WolfgangSchulz: See you on the 8th!`` at the start of a
line names the person who speaks. Each tag becomes a PERSON mention of the words of its handle
("Wolfgang Schulz"), so a chat is linked to the person a question names, and the model's entity
recognizer never reads the tag itself (it made "🌞 LiHua : Sounds" a person)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hopgraph.core.text import handle_words

#: a line's own timestamp before its speaker ("[2023-05-08 13:56] ", "2023-05-08 13:56 - "); group "time"
STAMP = r"[ \t]*\[?(?P<time>\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(?::\d{2})?)\]?[ \t]*[-\u2013]?[ \t]*"
#: a line's speaker tag: an optional timestamp, an optional emoji or bullet, a handle (a name,
#: "WolfgangSchulz", "Li Hua", "ChaeSong-hwa"), a colon, then the message
_TAG = re.compile(rf"^(?:{STAMP})?"
                  r"[^\w\n]{0,3}?(?P<handle>[A-Z][A-Za-z'\-]*(?:[ ][A-Z][A-Za-z'\-]*){0,2})[ \t]*:(?=[ \t]*\S)", re.M)
#: a tag names a person only if it is short; "Note", "Time", "Subject" and the like are field labels
_NOT_SPEAKERS = {"time", "date", "note", "notes", "subject", "re", "fwd", "from", "to", "cc", "title", "summary",
                 "question", "answer", "q", "a", "update", "edit", "ps", "warning", "error", "info", "tip",
                 "example", "source", "status", "step", "todo", "action", "location", "url"}


@dataclass(frozen=True)
class Speaker:
    """A speaker tag: its character span in the text (the handle and its colon) and the person's name."""

    start: int
    end: int
    name: str


def speakers(text: str) -> list[Speaker]:
    """The speaker tags of a text, in order: lines that start with a short name and a colon, where at
    least two lines do (one such line is a heading or a title, "Star Wars: Episode IV …", not a chat)."""
    found = [Speaker(m.start("handle"), m.end(), handle_words(m["handle"])) for m in _TAG.finditer(text)
             if m["handle"].lower() not in _NOT_SPEAKERS and len(m["handle"]) >= 2]
    return found if len(found) >= 2 else []
