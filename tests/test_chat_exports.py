"""Chat exports (Slack, Discord, mbox) read into the plain chat shape, on real files."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.settings import IngestSettings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.ingest.chat_exports import SESSION_GAP, read_chat_json, read_mbox
from hopgraph.ingest.source_text import Skipped, SourceText
from hopgraph.ingest.sources import read_sources
from hopgraph.ingest.speakers import speakers
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.conftest import settings_for

MAX = 1 << 20
T0 = 1683554160  # 2023-05-08 13:56:00 UTC


def slack(user: str, name: str, ts: float, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "user": user, "ts": f"{ts:.6f}", "text": text,
            "user_profile": {"real_name": name, "display_name": name.split()[0].lower()}, **extra}


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def doc(item: SourceText | Skipped | None) -> SourceText:
    assert isinstance(item, SourceText), item
    return item


def test_slack_day_file_round_trips(tmp_path: Path) -> None:
    day = write_json(tmp_path / "general" / "2023-05-08.json", [
        slack("U1", "Alice Smith", T0, "first message\ntext"),
        {"type": "message", "subtype": "channel_join", "user": "U3", "ts": f"{T0 + 5}.000100",
         "text": "<@U3> has joined the channel"},
        {"type": "message", "user": "U2", "user_name": "Bob", "ts": f"{T0 + 60}.000200",
         "text": "reply to <@U1> &amp; see <https://x.org|the docs>"},
        {"type": "message", "subtype": "bot_message", "username": "Deploy: Bot", "ts": f"{T0 + 90}.0",
         "text": "build passed"},
    ])
    item = doc(read_chat_json(day, MAX))
    assert item.text == ("Time: 2023-05-08 13:56\n"
                         "Alice Smith: first message text\n"
                         "Bob: reply to @Alice Smith & see the docs\n"
                         "Deploy Bot: build passed")
    assert item.document.title == "general" and item.document.metadata == {"chat_format": "slack"}
    assert "joined" not in item.text and not item.warning
    assert [s.name for s in speakers(item.text)] == ["Alice Smith", "Bob", "Deploy Bot"]


def test_sessions_split_on_a_new_day_and_a_long_gap(tmp_path: Path) -> None:
    gap = int(SESSION_GAP.total_seconds())
    late = 1683590100  # 2023-05-08 23:55 UTC
    day = write_json(tmp_path / "random" / "2023-05-08.json", [
        slack("U1", "Alice Smith", T0, "morning"),
        slack("U2", "Bob Jones", T0 + gap, "exactly the gap later: same session"),
        slack("U1", "Alice Smith", T0 + 2 * gap + 1, "over the gap: new session"),
        slack("U2", "Bob Jones", late, "before midnight"),
        slack("U1", "Alice Smith", late + 600, "after midnight: a new day"),
    ])
    lines = doc(read_chat_json(day, MAX)).text.splitlines()
    assert [line for line in lines if line.startswith("Time:")] == [
        "Time: 2023-05-08 13:56", "Time: 2023-05-08 21:56", "Time: 2023-05-09 00:05"]  # 23:55 goes on 21:56
    assert lines[:3] == ["Time: 2023-05-08 13:56", "Alice Smith: morning",
                         "Bob Jones: exactly the gap later: same session"]


def test_discord_export_round_trips(tmp_path: Path) -> None:
    path = write_json(tmp_path / "export.json", {
        "guild": {"name": "Lab"}, "channel": {"name": "design-review"},
        "messages": [
            {"type": "Default", "timestamp": "2023-05-08T15:56:00+02:00",
             "author": {"name": "alice_s", "nickname": "Alice Smith"}, "content": "shall we\nship it?"},
            {"type": "GuildMemberJoin", "timestamp": "2023-05-08T14:00:00Z", "author": {"name": "Carol"},
             "content": ""},
            {"type": "Default", "timestamp": "2023-05-08T14:01:00Z", "author": {"name": "Bob", "nickname": None},
             "content": "Yes"},
        ],
    })
    item = doc(read_chat_json(path, MAX))
    assert item.text == "Time: 2023-05-08 13:56\nAlice Smith: shall we ship it?\nBob: Yes"
    assert item.document.title == "design-review" and item.document.metadata == {"chat_format": "discord"}
    assert [s.name for s in speakers(item.text)] == ["Alice Smith", "Bob"]


MBOX = """\
From alice@example.org Mon May  8 13:56:00 2023
From: "Alice Smith" <alice@example.org>
To: team@example.org
Subject: Launch plan
Date: Mon, 08 May 2023 13:56:00 +0000

Shall we launch
on Friday?

--\x20
Alice Smith, Example Org

From bob.jones@example.org Mon May  8 14:10:00 2023
From: bob.jones@example.org
Subject: Re: Launch plan
Date: Mon, 08 May 2023 16:10:00 +0200

Friday works for me.

On Mon, 8 May 2023, Alice Smith wrote:
> Shall we launch
> on Friday?

From nobody Mon May  8 15:00:00 2023
From: Carol <carol@example.org>
Subject: Re: Launch plan

No date here.
"""


def test_mbox_thread_round_trips_and_a_dateless_email_is_warned(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "thread.mbox"
    path.write_text(MBOX, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="hopgraph.ingest.chat_exports"):
        item = doc(read_mbox(path, MAX))
    assert item.text == ("Time: 2023-05-08 13:56\nAlice Smith: Shall we launch on Friday?\n\n"
                         "Time: 2023-05-08 14:10\nbob.jones: Friday works for me.")
    assert item.document.title == "Launch plan" and item.document.metadata == {"chat_format": "mbox"}
    assert "1 malformed" in item.warning
    assert any("thread.mbox" in r.getMessage() and "message 2" in r.getMessage() and "Date" in r.getMessage()
               for r in caplog.records)


def test_a_malformed_message_is_warned_and_the_rest_kept(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    day = write_json(tmp_path / "general" / "2023-05-08.json", [
        slack("U1", "Alice Smith", T0, "hello"),
        {"type": "message", "user": "U2", "text": "no timestamp"},
        slack("U2", "Bob Jones", T0 + 60, "still here"),
        {"type": "message", "user": "U2", "ts": "soon", "text": "bad timestamp"},
    ])
    with caplog.at_level(logging.WARNING, logger="hopgraph.ingest.chat_exports"):
        item = doc(read_chat_json(day, MAX))
    assert item.text == "Time: 2023-05-08 13:56\nAlice Smith: hello\nBob Jones: still here"
    assert item.warning == "2 malformed message(s) skipped"
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2 and all("2023-05-08.json" in w for w in warned)
    assert "message 1 skipped" in warned[0] and "'ts'" in warned[0] and "message 3 skipped" in warned[1]


def test_unreadable_files_are_skipped_with_a_reason(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"type": "message", "ts": ', encoding="utf-8")
    joins = write_json(tmp_path / "general" / "2023-05-09.json", [
        {"type": "message", "subtype": "channel_join", "user": "U1", "ts": f"{T0}.0", "text": "joined"}])
    empty = tmp_path / "empty.mbox"
    empty.write_text("", encoding="utf-8")
    items = list(read_sources([bad, joins, empty], [".json", ".mbox"], MAX))
    assert all(isinstance(i, Skipped) for i in items)
    reasons = {Path(i.source).name: i.reason for i in items if isinstance(i, Skipped)}
    assert reasons["bad.json"].startswith("malformed JSON") and "line 1" in reasons["bad.json"]
    assert reasons["2023-05-09.json"] == "slack export has no readable messages"
    assert reasons["empty.mbox"] == "mbox export has no readable messages"


def test_other_json_is_read_as_text_as_before(tmp_path: Path) -> None:
    """A .json that is no chat export is what it was before chat exports: a text document."""
    config = write_json(tmp_path / "config.json", {"name": "hopgraph", "messages": ["not", "chat"]})
    assert read_chat_json(config, MAX) is None
    [item] = read_sources([config], [".json"], MAX)
    assert doc(item).text == config.read_text(encoding="utf-8") and doc(item).document.title == "config"
    assert "chat_format" not in doc(item).document.metadata
    assert list(read_sources([tmp_path], [".txt"], MAX)) == []  # a walk reads .json only if it is listed


def test_a_slack_export_folder_is_ingested(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                           tmp_path: Path) -> None:
    export = tmp_path / "export"
    write_json(export / "general" / "2023-05-08.json", [
        slack("U1", "Alice Smith", T0, "Alan Turing worked at Bletchley Park."),
        slack("U2", "Bob Jones", T0 + 60, "He later moved to Manchester.")])
    write_json(export / "random" / "2023-05-09.json", [
        slack("U2", "Bob Jones", T0 + 86400, "Ada Lovelace wrote the first program."),
        slack("U1", "Alice Smith", T0 + 86460, "For the Analytical Engine.")])
    settings = settings_for(arcadedb, tmp_path / "data", ingest=IngestSettings(extensions=[".json"]))
    with Platform(settings, embedder=embedder) as platform:
        report = platform.ingest([export])
        assert report.documents_ingested == 2 and not report.warnings
        ids = [d.id for d in platform._store.documents_under(str(export.resolve()))]
        chunks = platform._store.snapshot_chunks(ids)
    titles = {c["title"] for c in chunks}
    assert titles == {"general", "random"} and all("slack" in str(c["metadata"]) for c in chunks)
    text = "\n".join(c["text"] for c in chunks)
    assert "Alice Smith: Alan Turing worked at Bletchley Park." in text and "Bob Jones:" in text
