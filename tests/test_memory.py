"""The process's allocator policy for index refreshes (``hopgraph.core.memory``)."""

from __future__ import annotations

import platform

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
