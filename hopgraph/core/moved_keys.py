"""Settings keys that moved: a value given at an old key (TOML, environment or keyword arguments) is read at
its new key for one release, with a ``DeprecationWarning`` and a log warning naming the new key; a value
given at both is refused, naming both."""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

log = logging.getLogger(__name__)


def _json_of_env(value: Any) -> Any:
    """A table or list given as JSON in the environment (``HOPGRAPH_RETRIEVAL__WEIGHTS='{"*": 0.5}'``): the
    settings source decodes JSON only for the fields it knows, and a moved key is no longer one of them."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _table(value: Any) -> dict[str, Any] | None:
    """A table as a plain dict (a model: the keys it was given), else None."""
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=True)
    return dict(value) if isinstance(value, Mapping) else None


def _set(data: dict[str, Any], path: list[str], value: Any, old: str, new: str) -> None:
    """Set ``path`` in the nested ``data`` (tables given as models become dicts of their given keys); a value
    already there is refused, naming the ``old`` and ``new`` keys."""
    head, *rest = path
    if not rest:
        if head in data:
            raise ValueError(f"{old} and its new key {new} are both set: keep only {new}")
        data[head] = value
        return
    table = _table(data.get(head)) or {}
    data[head] = table
    _set(table, rest, value, old, new)


def _pop(data: dict[str, Any], path: list[str]) -> tuple[bool, Any]:
    """Remove ``path`` from the nested ``data``: (found, value)."""
    head, *rest = path
    if not rest:
        return (True, data.pop(head)) if head in data else (False, None)
    table = _table(data.get(head))
    if table is None or rest[0] not in table:
        return False, None
    data[head] = table
    return _pop(table, rest)


def move_keys(data: Any, moves: Mapping[str, tuple[str, ...]], prefix: str = "") -> Any:
    """``data`` (the raw values of a settings model) with each old key of ``moves`` (dotted, relative to the
    model) moved to its new keys; a new key ending in ``.*`` takes each key of the old table. ``prefix`` is the
    model's place in the settings, for the messages (``"retrieval."``)."""
    if not isinstance(data, Mapping):
        return data
    out = dict(data)
    for old, targets in moves.items():
        found, value = _pop(out, old.split("."))
        if not found:
            continue
        value = _json_of_env(value)
        names = " and ".join(prefix + t.removesuffix(".*") for t in targets)
        message = f"setting {prefix}{old} is deprecated and will be removed in the next release: use {names}"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        log.warning(message)
        for target in targets:
            table = _table(value) if target.endswith(".*") else None
            new = target.removesuffix(".*")
            if table is None:
                _set(out, new.split("."), value, prefix + old, prefix + new)
                continue
            for key, item in table.items():
                _set(out, [*new.split("."), key], item, f"{prefix}{old}.{key}", f"{prefix}{new}.{key}")
    return out
