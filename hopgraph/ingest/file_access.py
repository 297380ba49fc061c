"""Access groups a file sets for itself: a Markdown file's front matter, or a sidecar beside any file.

- **Front matter**: a YAML block between two ``---`` lines at the very start of a Markdown file. Its
  ``groups`` (a list, or a comma-separated string) are the document's access groups and its ``title``,
  when the file has no level-1 heading, the document's title. The block itself is not indexed.
- **Sidecar**: ``NAME.groups`` beside ``NAME`` (``payroll.pdf.groups``) lists the groups, separated by
  commas or lines (``#`` starts a comment). They are the groups of every document of that file that
  names none of its own (front matter, a JSONL record's ``groups``).

The nearest setting wins: a document's own groups, then its file's sidecar, then the run's
(``--groups``). A file whose access cannot be read for sure is skipped with the reason, and what an
earlier run ingested from it is withdrawn (``Skipped.keep``): a front matter block that names
``groups`` (in any case) but cannot be read, a ``groups`` that is empty or not names, a block opened but
never closed that names ``groups``, an unreadable, empty or invalid sidecar. The block is read as plain
YAML: every value a string, no aliases.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from hopgraph.core.access import META_KEY, check_groups, parse_groups
from hopgraph.core.errors import BadInputError

#: the sidecar of ``NAME`` is ``NAME`` + this suffix
SIDECAR_SUFFIX = ".groups"
_SIDECAR_MAX = 65_536
_OPENS = re.compile(r"\A\s*---[ \t]*\r?\n")
_BLOCK = re.compile(_OPENS.pattern + r"(?P<yaml>.*?)(?:\r?\n)?^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)",
                    re.DOTALL | re.MULTILINE)
_NAMES_GROUPS = re.compile(rf"^[ \t]*[\"']?{META_KEY}[\"']?[ \t]*:", re.MULTILINE | re.IGNORECASE)


class _PlainLoader(yaml.BaseLoader):
    """YAML with every scalar a string (no dates or numbers to fail on) and no aliases (no expansion)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("aliases are not allowed in front matter")
        return super().compose_node(parent, index)


def groups_value(value: Any) -> list[str]:
    """The groups of a front-matter field: a list of names or one comma-separated string (None: none);
    anything else, or an invalid name, is a ``BadInputError``."""
    if value is None:
        return []
    if isinstance(value, str):
        return parse_groups(value)
    if isinstance(value, list):
        return check_groups(value)
    raise BadInputError(f"'{META_KEY}' must be a list of names or a comma-separated string, "
                        f"not {type(value).__name__}")


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(the fields of a Markdown file's front matter, the text after it); ``({}, text)`` when the file
    opens with no YAML mapping between ``---`` lines. A block that names ``groups`` but cannot be read
    (not YAML, never closed) is a ``BadInputError``."""
    found = _BLOCK.match(text)
    if not found:
        if _OPENS.match(text) and _NAMES_GROUPS.search(text[:4096]):
            raise BadInputError(f"front matter opened by '---' is never closed: its '{META_KEY}' cannot be read")
        return {}, text
    block = found.group("yaml")
    try:
        fields = yaml.load(block, Loader=_PlainLoader) if block.strip() else {}  # strings, lists, maps only
    except Exception as exc:  # YAML errors, a nesting past the recursion limit
        if _NAMES_GROUPS.search(block):
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 2})" if mark is not None else ""
            raise BadInputError(f"front matter is not valid YAML{where}: its '{META_KEY}' cannot be read") from None
        return {}, text
    if not isinstance(fields, dict):
        return {}, text
    return fields, text[found.end():]


def front_matter_groups(fields: dict[str, Any]) -> list[str]:
    """The access groups front matter names (checked), or a ``BadInputError`` saying what is wrong: a
    ``groups`` key written otherwise (``Groups``), or one that names no group."""
    odd = [k for k in fields if isinstance(k, str) and k.strip().lower() == META_KEY and k != META_KEY]
    if odd:
        raise BadInputError(f"front matter: write the key {odd[0]!r} as '{META_KEY}'")
    if META_KEY not in fields:
        return []
    try:
        groups = groups_value(fields[META_KEY])
    except BadInputError as exc:
        raise BadInputError(f"front matter: {exc}") from None
    if not groups:
        raise BadInputError(f"front matter: '{META_KEY}' names no group (leave the key out for the run's groups)")
    return groups


def sidecar_of(path: Path) -> Path:
    """Where the groups sidecar of ``path`` would be."""
    return path.with_name(path.name + SIDECAR_SUFFIX)


def is_sidecar(path: Path) -> bool:
    """Whether ``path`` is the groups sidecar of a file beside it."""
    base = path.name[: -len(SIDECAR_SUFFIX)] if path.name.endswith(SIDECAR_SUFFIX) else ""
    return bool(base) and path.with_name(base).is_file()


def sidecar_groups(path: Path) -> list[str]:
    """The access groups the sidecar of ``path`` lists ([] with no sidecar); an unreadable, oversized
    or invalid sidecar is a ``BadInputError`` naming it."""
    side = sidecar_of(path)
    if not (side.exists() or side.is_symlink()):
        return []
    if not side.is_file():
        raise BadInputError(f"groups sidecar {side.name} is not a readable file")
    try:
        if side.stat().st_size > _SIDECAR_MAX:
            raise BadInputError(f"groups sidecar {side.name} is larger than {_SIDECAR_MAX} bytes")
        raw = side.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"cannot read groups sidecar {side.name}: {exc}") from None
    names = ",".join(line.split("#", 1)[0] for line in raw.splitlines())
    try:
        groups = parse_groups(names)
    except BadInputError as exc:
        raise BadInputError(f"groups sidecar {side.name}: {exc}") from None
    if not groups:
        raise BadInputError(f"groups sidecar {side.name} names no group (delete it for the run's groups)")
    return groups
