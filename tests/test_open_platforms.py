"""The platforms a long-running process keeps open per collection (``app.open_platforms``), shared by
``hopgraph serve`` and ``hopgraph mcp``: on the in-memory stores, no server."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from hopgraph import Platform
from hopgraph.app.collections import create_collection
from hopgraph.app.open_platforms import OpenPlatforms
from hopgraph.core.errors import NotFoundError
from hopgraph.testing import memory_settings
from tests.hash_embedder import HashEmbedder


def test_each_collection_is_opened_once_shares_the_models_and_closes_on_forget(tmp_path: Path) -> None:
    settings = memory_settings(tmp_path)
    for name in ("teama", "teamb"):
        create_collection(settings, name)
    with Platform(settings, embedder=HashEmbedder()) as default:
        opened = OpenPlatforms(default)
        assert opened.get() is default and opened.get("default") is default and opened.names() == []
        got: list[Platform] = []
        threads = [threading.Thread(target=lambda: got.append(opened.get("teama"))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len({id(p) for p in got}) == 1 and got[0] is not default  # opened once, whoever asked first
        team = got[0]
        assert team.settings.collection == "teama" and team.embedder is default.embedder and opened.names() == ["teama"]
        opened.forget("teama")
        opened.forget("never-opened")  # nothing to close
        assert opened.names() == [] and opened.get("teama") is not team  # a forgotten one opens afresh
        opened.get("teamb")
        opened.close_others()
        assert opened.names() == [] and opened.get() is default
        with pytest.raises(NotFoundError):
            opened.get("nosuch")
        assert opened.names() == []  # nothing half-open is kept
