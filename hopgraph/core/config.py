"""Loading the settings strictly: a misspelled section or key is an error naming the closest valid one,
a TOML syntax error is one line with file:line, a named config file that is missing is an error, and
a bad value is one line naming its setting. ``Settings()`` alone stays lenient (library use)."""

from __future__ import annotations

import difflib
import json
import os
import tomllib
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from hopgraph.core.errors import BadInputError
from hopgraph.core.settings import Settings

ENV_PREFIX = "HOPGRAPH_"
#: environment variables with the prefix that are not settings
ENV_NOT_SETTINGS = {"HOPGRAPH_CONFIG"}


class SettingsError(BadInputError):
    """The settings cannot be loaded as given."""


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The settings model behind a field's type (``X``, ``X | None``, ``list[X]``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _unknown(data: Mapping[str, Any], model: type[BaseModel], where: str) -> Iterator[str]:
    """Messages for every key of ``data`` (recursively) that ``model`` does not have."""
    fields = model.model_fields
    moved: dict[str, tuple[str, ...]] = getattr(model, "MOVED_KEYS", {})
    for key, value in data.items():
        path = f"{where}.{key}" if where else key
        if key in moved:  # read with a warning; a moved table is checked as its new one
            target = _moved_model(model, moved[key][0].removesuffix(".*"))
            if target is not None and isinstance(value, Mapping):
                yield from _unknown(value, target, path)
            continue
        if key not in fields and model.model_config.get("extra") == "allow":
            continue  # a table its own model checks later (a plug-in mode's settings)
        if key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.6)
            hint = f"; did you mean {'.'.join([*filter(None, [where]), close[0]])!r}?" if close else ""
            yield f"unknown setting {path!r}{hint}"
            continue
        sub = _model_of(fields[key].annotation)
        if sub is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, Mapping):
                yield from _unknown(item, sub, path)


def _moved_model(model: type[BaseModel], dotted: str) -> type[BaseModel] | None:
    """The settings model at ``dotted`` below ``model`` (None where it names a plain value)."""
    for name in dotted.split("."):
        info = model.model_fields.get(name)
        found = _model_of(info.annotation) if info is not None else None
        if found is None:
            return None
        model = found
    return model


def _env_tree(environ: Mapping[str, str]) -> dict[str, Any]:
    """``HOPGRAPH_A__B=1`` -> ``{"a": {"b": "1"}}`` (the shape pydantic-settings reads them in). A flat
    name that is no setting (``HOPGRAPH_PORT`` of docker/compose.yaml) belongs to another tool: left out."""
    tree: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name in ENV_NOT_SETTINGS:
            continue
        if "__" not in name and name[len(ENV_PREFIX):].lower() not in Settings.model_fields:
            continue
        *parents, leaf = name[len(ENV_PREFIX):].lower().split("__")
        node = tree
        for p in parents:
            node = node.setdefault(p, {}) if isinstance(node.get(p, {}), dict) else {}
        node[leaf] = value
    return tree


def _complex(annotation: Any) -> bool:
    """Whether a field's type is a list, set, tuple or dict (``X | None`` included): the environment
    gives such a value as JSON."""
    origin = typing.get_origin(annotation)
    if origin in (list, set, tuple, dict, frozenset):
        return True
    return any(_complex(a) for a in typing.get_args(annotation)) if origin is not None else False


def _non_json_env(environ: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """(variable, a JSON example) for every ``HOPGRAPH_…`` variable that sets a list or table setting
    with a value that is not JSON."""
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name in ENV_NOT_SETTINGS:
            continue
        model: type[BaseModel] | None = Settings
        annotation: Any = None
        parts = name[len(ENV_PREFIX):].lower().split("__")
        while parts:
            part = parts.pop(0)
            moved: dict[str, tuple[str, ...]] = getattr(model, "MOVED_KEYS", {})
            if part in moved:  # an old key: checked as its new one
                parts = [*moved[part][0].removesuffix(".*").split("."), *parts]
                continue
            field = model.model_fields.get(part) if model is not None else None
            if field is None:
                annotation = None
                break
            annotation, model = field.annotation, _model_of(field.annotation)
        if annotation is None or not _complex(annotation):
            continue
        try:
            json.loads(value)
        except ValueError:
            is_table = typing.get_origin(annotation) is dict or any(
                typing.get_origin(a) is dict for a in typing.get_args(annotation))
            yield name, '{"key": "value"}' if is_table else '["a", "b"]'  # (not the value: it may be a secret)


def config_path(environ: Mapping[str, str] = os.environ) -> tuple[Path, bool]:
    """The TOML file to read and whether it was named explicitly (then it must exist)."""
    named = environ.get("HOPGRAPH_CONFIG")
    return (Path(named), True) if named else (Path("hopgraph.toml"), False)


def load_settings(environ: Mapping[str, str] = os.environ, **overrides: Any) -> Settings:
    """The settings from ``overrides``, the environment and the config file, checked strictly."""
    path, named = config_path(environ)
    problems: list[str] = []
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{path}: {exc}") from exc
        except OSError as exc:
            raise SettingsError(f"cannot read the config file {path}: {exc}") from exc
        problems += [f"{path}: {m}" for m in _unknown(data, Settings, "")]
    elif named:
        raise SettingsError(f"HOPGRAPH_CONFIG names {path}, which does not exist")
    problems += [f"environment {name}: {m}" for name in sorted(environ)
                 for m in _unknown(_env_tree({name: environ[name]}), Settings, "")]
    if problems:
        raise SettingsError("; ".join(problems))
    bad_json = [f"{name} must be JSON for a list or table setting (for example {name}='{example}')"
                for name, example in _non_json_env(environ)]
    if bad_json:
        raise SettingsError("; ".join(bad_json))
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        details, from_file = [], False
        for e in exc.errors()[:5]:
            env = _env_name(e["loc"], environ)
            from_file |= env is None
            shown = f" (environment {env})" if env else ""  # not its value: it may be a secret
            details.append(f"{'.'.join(str(p) for p in e['loc'])}{shown}: {e['msg']}")
        where = f" ({path})" if path.is_file() and from_file else ""
        raise SettingsError(f"invalid settings{where}: {'; '.join(details)}") from exc


def _env_name(loc: tuple[int | str, ...], environ: Mapping[str, str]) -> str | None:
    """The environment variable that set the value at ``loc`` (or the section holding it), if one did:
    the environment wins over the config file."""
    names = {n.upper(): n for n in environ if n.upper().startswith(ENV_PREFIX)}
    keys = [str(k) for k in loc]
    for n in range(len(keys), 0, -1):
        found = names.get(ENV_PREFIX + "__".join(keys[:n]).upper())
        if found is not None:
            return found
    return None
