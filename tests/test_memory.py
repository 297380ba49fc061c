"""The process's allocator policy for index refreshes (``hopgraph.core.memory``)."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from hopgraph.core import memory


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the policy is glibc's mallopt")
def test_glibc_takes_the_policy_once_per_process() -> None:
    assert memory.keep_freed_memory() is True
    assert memory.keep_freed_memory() is True  # asked again: the first outcome, nothing applied twice
    assert memory._applied is True


def test_without_glibc_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory.sys, "platform", "darwin")
    assert memory._apply() is False


def _rss_mb() -> float:
    text = Path("/proc/self/status").read_text()
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the policy is glibc's mallopt")
def test_pregrown_memory_is_held_and_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    assert memory.keep_freed_memory() is True
    monkeypatch.setattr(memory, "_grown", 0)
    size = 256 << 20
    assert memory.pregrow(size) == size
    held = _rss_mb()  # (written, then freed and kept: resident)
    assert memory.pregrow(size) == 0 and memory.pregrow(int(size * memory.AGAIN)) == 0  # once per size
    block = np.ones(size // 8)  # a refresh's array: on the pages set aside, no new ones
    assert _rss_mb() - held < 0.25 * (size >> 20)
    del block


def test_nothing_is_set_aside_where_freed_memory_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_applied", False)
    monkeypatch.setattr(memory, "_grown", 0)
    assert memory.pregrow(64 << 20) == 0
