"""The configuration reference, generated from the settings models: every key (nested sections and the
items of list sections included) with its type, default, description and environment variable. The docs
build renders :func:`settings_reference` into ``docs/configuration.md``; a key without a description is
listed by :func:`missing_descriptions` (the build and a test fail on it). Imports nothing of the project
beyond ``hopgraph.core``."""

from __future__ import annotations

import html
import json
import re
import types
import typing
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from hopgraph.core.settings import Settings

ENV_PREFIX = "HOPGRAPH_"
ENV_DELIMITER = "__"
_DEFAULT_CHARS = 60
_CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)


@dataclass(frozen=True)
class SettingDoc:
    """One key of the settings: ``section`` is its table (``""`` for the top level, ``retrieval.nli``,
    ``api.api_keys[]`` for the items of a list), ``key`` its full dotted name."""

    section: str
    key: str
    type: str
    default: str
    description: str
    env: str | None


def _sub_model(annotation: Any) -> tuple[type[BaseModel], bool] | None:
    """The settings model behind a field's type and whether it is a list of them (``X``, ``list[X]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        if isinstance(item, type) and issubclass(item, BaseModel):
            return item, True
    return None


def _type_name(annotation: Any) -> str:
    """A short, TOML-minded name of a field's type."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join("None" if a is type(None) else _type_name(a) for a in args)
    if origin in (list, tuple, dict, set):
        inner = ", ".join(_type_name(a) for a in args if a is not Ellipsis)
        return f"{origin.__name__}[{inner}]"
    if annotation is SecretStr:
        return "secret str"
    if isinstance(annotation, type) and issubclass(annotation, Path):
        return "path"
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation)


def _bounds(info: FieldInfo) -> str:
    """The field's numeric and length bounds, as ``≥ 1, ≤ 100``."""
    parts = []
    for m in info.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"),
                           ("min_length", "length ≥"), ("max_length", "length ≤")):
            value = getattr(m, attr, None)
            if value is not None and isinstance(m, annotated_types.BaseMetadata):
                parts.append(f"{sign} {value:_}" if isinstance(value, int) else f"{sign} {value}")
        pattern = getattr(m, "pattern", None)
        if pattern:
            parts.append(f"matches `{pattern}`")
    return ", ".join(parts)


def _default_text(info: FieldInfo) -> str:
    """The default as one would write it in hopgraph.toml (``unset`` for None; long texts cut)."""
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, SecretStr):
        return "(secret)"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, tuple):
        value = list(value)
    text = json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float):
        text = f"{value:_}" if isinstance(value, int) and abs(value) >= 10_000 else str(value)
    if len(text) > _DEFAULT_CHARS:
        text = text[: _DEFAULT_CHARS - 1] + "…"
    return text


def _walk(model: type[BaseModel], prefix: str, env: str | None) -> list[SettingDoc]:
    rows: list[SettingDoc] = []
    nested: list[tuple[type[BaseModel], str, str | None]] = []
    for name, info in model.model_fields.items():
        key = f"{prefix}.{name}" if prefix else name
        var = f"{env}{ENV_DELIMITER if env != ENV_PREFIX else ''}{name.upper()}" if env else None
        sub = _sub_model(info.annotation)
        if sub is not None and not sub[1]:
            nested.append((sub[0], key, var))
            continue
        bounds = _bounds(info)
        type_name = _type_name(info.annotation) + (f" ({bounds})" if bounds else "")
        rows.append(SettingDoc(prefix, key, type_name, _default_text(info), (info.description or "").strip(), var))
        if sub is not None:
            nested.append((sub[0], f"{key}[]", None))
    for sub_model, key, var in nested:
        rows.extend(_walk(sub_model, key, var))
    return rows


def setting_docs(model: type[BaseModel] = Settings) -> list[SettingDoc]:
    """Every key of ``model`` and of its sections, depth first, in the order the models declare them."""
    return _walk(model, "", ENV_PREFIX)


def section_models(model: type[BaseModel] = Settings, prefix: str = "") -> dict[str, type[BaseModel]]:
    """Each table of the settings (``""``, ``graph``, ``retrieval.nli``, ``api.api_keys[]``…) and its model."""
    found: dict[str, type[BaseModel]] = {prefix: model}
    for name, info in model.model_fields.items():
        sub = _sub_model(info.annotation)
        if sub is not None:
            key = f"{prefix}.{name}" if prefix else name
            found.update(section_models(sub[0], f"{key}[]" if sub[1] else key))
    return found


def missing_descriptions(model: type[BaseModel] = Settings) -> list[str]:
    """The keys whose field has no description (the reference would leave them unexplained)."""
    return [row.key for row in setting_docs(model) if not row.description]


def markdown_text(text: str) -> str:
    """``text`` with ``&``, ``<`` and ``>`` outside its code spans written as entities, so that a placeholder
    such as ``<data_dir>`` shows as written instead of being read by the browser as an HTML tag."""
    out: list[str] = []
    last = 0
    for m in _CODE_SPAN.finditer(text):
        out += [html.escape(text[last:m.start()], quote=False), m.group(0)]
        last = m.end()
    return "".join([*out, html.escape(text[last:], quote=False)])


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _heading(section: str) -> str:
    if not section:
        return "Top level"
    if section.endswith("[]"):
        return f"`[[{section[:-2]}]]` (each item)"
    return f"`[{section}]`"


def settings_reference(model: type[BaseModel] = Settings) -> str:
    """The configuration reference as Markdown: one table per section of ``model``."""
    rows = setting_docs(model)
    models = section_models(model)
    out: list[str] = []
    for section, sub in models.items():
        mine = [r for r in rows if r.section == section]
        if not mine:
            continue
        doc = " ".join((sub.__doc__ or "").split()) if section else ""
        out += [f"## {_heading(section)}", ""]
        if doc:
            out += [markdown_text(_cell(doc).replace("\\|", "|")), ""]
        out += ["| key | type | default | description |", "|---|---|---|---|"]
        for r in mine:
            name = r.key.rsplit(".", 1)[-1]
            env = f"<br><small>`{r.env}`</small>" if r.env else ""
            description = markdown_text(_cell(r.description)) or "**undocumented**"
            out.append(f"| `{name}`{env} | {markdown_text(_cell(r.type))} | `{_cell(r.default)}` | {description} |")
        out.append("")
    return "\n".join(out)
