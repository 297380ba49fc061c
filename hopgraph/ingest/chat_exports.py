"""Chat exports as documents in the plain chat shape the extractor reads (``ingest.speakers``): a
``Time: YYYY-MM-DD HH:MM`` line (UTC) opening each session, then one ``Speaker: text`` line per message.

Read: Slack channel day files (``general/2023-05-08.json``), DiscordChatExporter JSON and mbox email
threads (``.mbox``, each email its own session). A malformed message is skipped with a warning naming
the file and the message's index; a file with no readable message is ``Skipped``. Nothing raises.
"""

from __future__ import annotations

import email.utils
import html
import json
import logging
import mailbox
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import IO, Any, cast

from hopgraph.core.errors import BadInputError
from hopgraph.ingest.formats import html_to_text
from hopgraph.ingest.source_text import Skipped, SourceText, decode, read_bytes, text_document

log = logging.getLogger(__name__)

JSON_EXT = {".json"}
MBOX_EXT = {".mbox"}
#: a pause longer than this starts a new session (as does a new calendar day, UTC)
SESSION_GAP = timedelta(hours=4)
#: Slack subtypes and Discord message types that are no one speaking
SLACK_SKIP_SUBTYPES = {"channel_join", "channel_leave", "group_join", "group_leave"}
DISCORD_SKIP_TYPES = {"GuildMemberJoin", "RecipientAdd", "RecipientRemove"}

_NAME_JUNK = re.compile(r"[^\w .'\-]+")
_SLACK_LINK = re.compile(r"<([^<>|]+)(?:\|([^<>]+))?>")


class BadMessage(BadInputError):
    """A message that lacks a field or has one of the wrong type (it is skipped, with a warning)."""


@dataclass(frozen=True)
class Message:
    """One message: when (UTC), who and what (one line)."""

    when: datetime
    speaker: str
    text: str


def speaker_name(raw: str) -> str:
    """A display name fit for a ``Speaker:`` tag: no colons or other punctuation, single spaces."""
    return " ".join(_NAME_JUNK.sub(" ", raw).split())


def one_line(text: str) -> str:
    return " ".join(text.split())


def render(messages: Iterable[Message], gap: timedelta | None = SESSION_GAP) -> str:
    """The chat text: a ``Time:`` line before the first message, on each new day (UTC) and after each
    pause over ``gap`` (None: before every message), sessions apart by a blank line."""
    lines: list[str] = []
    last: datetime | None = None
    for m in sorted(messages, key=lambda m: m.when):
        if last is None or gap is None or m.when.date() != last.date() or m.when - last > gap:
            lines += [""] if lines else []
            lines.append(f"Time: {m.when:%Y-%m-%d %H:%M}")
        lines.append(f"{m.speaker}: {m.text}")
        last = m.when
    return "\n".join(lines)


def utc(when: datetime) -> datetime:
    """An aware UTC datetime (a naive one is taken as UTC)."""
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _field(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise BadMessage(f"no {key!r} string")
    return value


def _collect(source: str, items: Iterable[Any], parse: Callable[[Any], Message | None]) -> tuple[list[Message], int]:
    """The messages ``parse`` makes of ``items`` (None: a message that says nothing, left out quietly),
    and how many were malformed (each logged with its index)."""
    messages: list[Message] = []
    bad = 0
    for index, item in enumerate(items):
        try:
            message = parse(item)
        except Exception as exc:  # untrusted input: one bad message never costs the others
            bad += 1
            log.warning("%s: message %d skipped: %s", source, index, exc)
            continue
        if message is not None:
            messages.append(message)
    return messages, bad


def chat_document(source: str, title: str, fmt: str, messages: list[Message], bad: int,
                  gap: timedelta | None = SESSION_GAP) -> SourceText | Skipped:
    """The document of a chat's messages, or why there is none."""
    if not messages:
        why = f" ({bad} malformed)" if bad else ""
        return Skipped(source, f"{fmt} export has no readable messages{why}")
    doc = text_document(source, title, render(messages, gap), metadata={"chat_format": fmt})
    if bad and isinstance(doc, SourceText):
        return SourceText(doc.document, doc.text, warning=f"{bad} malformed message(s) skipped")
    return doc


# -- Slack ----------------------------------------------------------------------------------------

def is_slack(data: Any) -> bool:
    return isinstance(data, list) and any(isinstance(m, dict) and m.get("type") == "message" and "ts" in m
                                          for m in data)


def _slack_name(m: dict[str, Any]) -> str:
    """The poster's name: real or display name, user name, else the user (or bot) id; "" if none."""
    profile = _obj(m.get("user_profile"))
    names = (profile.get("real_name"), profile.get("display_name"), m.get("user_name"), m.get("username"),
             m.get("user"), m.get("bot_id"))
    return next((speaker_name(n) for n in names if isinstance(n, str) and speaker_name(n)), "")


def _slack_text(text: str, names: dict[str, str]) -> str:
    """Slack markup as people read it: ``<@U1>`` -> ``@Alice``, ``<url|label>`` -> ``label``."""
    def link(m: re.Match[str]) -> str:
        target, label = m.group(1), m.group(2)
        if target.startswith("@"):
            return "@" + (label or names.get(target[1:], target[1:]))
        if target.startswith("!"):
            return "@" + (label or target[1:])
        return label or target
    return html.unescape(_SLACK_LINK.sub(link, text))


def slack_messages(source: str, data: list[Any]) -> tuple[list[Message], int]:
    names = {m["user"]: _slack_name(m) for m in data
             if isinstance(m, dict) and isinstance(m.get("user"), str) and isinstance(m.get("user_profile"), dict)}

    def parse(m: Any) -> Message | None:
        if not isinstance(m, dict) or m.get("type") != "message":
            raise BadMessage("not a message object")
        if m.get("subtype") in SLACK_SKIP_SUBTYPES:
            return None
        try:
            when = datetime.fromtimestamp(float(_field(m, "ts")), UTC)
        except (ValueError, OverflowError, OSError) as exc:
            raise BadMessage(f"bad 'ts': {exc}") from exc
        speaker = _slack_name(m)
        if not speaker:
            raise BadMessage("no user")
        text = one_line(_slack_text(_field(m, "text"), names))
        return Message(when, speaker, text) if text else None

    return _collect(source, data, parse)


# -- Discord --------------------------------------------------------------------------------------

def is_discord(data: Any) -> bool:
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return False
    return isinstance(data.get("channel"), dict) or any(isinstance(m, dict) and "author" in m
                                                        for m in data["messages"])


def discord_messages(source: str, data: dict[str, Any]) -> tuple[list[Message], int]:
    def parse(m: Any) -> Message | None:
        if not isinstance(m, dict):
            raise BadMessage("not a message object")
        if m.get("type") in DISCORD_SKIP_TYPES:
            return None
        when = utc(datetime.fromisoformat(_field(m, "timestamp")))
        author = m.get("author")
        if not isinstance(author, dict):
            raise BadMessage("no 'author' object")
        names = (author.get("nickname"), author.get("name"))
        speaker = next((speaker_name(n) for n in names if isinstance(n, str) and speaker_name(n)), "")
        if not speaker:
            raise BadMessage("author has no name")
        text = one_line(_field(m, "content"))
        return Message(when, speaker, text) if text else None

    return _collect(source, data["messages"], parse)


def read_chat_json(path: Path, max_bytes: int) -> SourceText | Skipped | None:
    """A Slack or Discord export as one document; None: valid JSON of another shape (not a chat);
    unreadable, not UTF-8 or not JSON: ``Skipped``."""
    source = str(path.resolve())
    data = read_bytes(path, max_bytes)
    if isinstance(data, Skipped):
        return data
    raw = decode(source, data)
    if isinstance(raw, Skipped):
        return raw
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        return Skipped(source, f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except RecursionError:
        return Skipped(source, "malformed JSON: nested too deeply")
    if is_slack(parsed):
        messages, bad = slack_messages(source, parsed)
        return chat_document(source, path.resolve().parent.name, "slack", messages, bad)
    if is_discord(parsed):
        title = _obj(parsed.get("channel")).get("name")
        messages, bad = discord_messages(source, parsed)
        return chat_document(source, title if isinstance(title, str) else path.stem, "discord", messages, bad)
    return None


# -- mbox -----------------------------------------------------------------------------------------

def email_text(body: str) -> str:
    """An email body without quoted lines (``>``), their ``On … wrote:`` line, or the signature."""
    kept: list[str] = []
    for line in body.splitlines():
        if line.rstrip() == "--":  # the signature delimiter ("-- "), its space often trimmed
            break
        if line.lstrip().startswith(">"):
            while kept and not kept[-1].strip():
                kept.pop()
            if kept and kept[-1].rstrip().endswith("wrote:"):
                kept.pop()
            continue
        kept.append(line)
    return one_line("\n".join(kept))


def _email_message(m: EmailMessage) -> Message | None:
    date, sender = m.get("Date"), m.get("From")
    if not date or not sender:
        raise BadMessage("no 'Date' header" if not date else "no 'From' header")
    try:
        when = utc(email.utils.parsedate_to_datetime(str(date)))
    except (TypeError, ValueError) as exc:
        raise BadMessage(f"bad 'Date' header {str(date)!r}") from exc
    name, address = email.utils.parseaddr(str(sender))
    speaker = speaker_name(name) or speaker_name(address.split("@", 1)[0])
    if not speaker:
        raise BadMessage(f"bad 'From' header {str(sender)!r}")
    part = m.get_body(preferencelist=("plain", "html"))
    if part is None:
        return None
    content = part.get_content()
    if part.get_content_subtype() == "html":
        content = html_to_text(content)[1]
    text = email_text(content)
    return Message(when, speaker, text) if text else None


def _parse_email(f: IO[bytes]) -> EmailMessage:
    message = BytesParser(policy=policy.default).parse(f)
    assert isinstance(message, EmailMessage)  # policy.default makes EmailMessage
    return message


def _subject(m: EmailMessage) -> str:
    try:
        return one_line(str(m.get("Subject") or ""))
    except Exception:  # a malformed header: the title falls back to the file's name
        return ""


def read_mbox(path: Path, max_bytes: int) -> SourceText | Skipped:
    """An mbox thread as one document, each email its own session; its title the first Subject."""
    source = str(path.resolve())
    data = read_bytes(path, max_bytes)  # the size cap (mailbox reads the file itself)
    if isinstance(data, Skipped):
        return data
    try:
        box = mailbox.mbox(path, factory=_parse_email, create=False)  # type: ignore[arg-type]  # any Message
        emails = cast(list[EmailMessage], list(box))
    except Exception as exc:  # a parser of untrusted bytes
        return Skipped(source, f"unreadable mbox: {exc}")
    subject = next((s for s in map(_subject, emails) if s), path.stem)
    messages, bad = _collect(source, emails, _email_message)
    return chat_document(source, subject, "mbox", messages, bad, gap=None)
