"""docs/install.md, the install page: it describes every extra that pyproject.toml declares, and names only
commands the CLI has."""

from __future__ import annotations

import re
import tomllib

from hopgraph.cli.main import app
from tests.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "install.md"


def test_every_declared_extra_has_a_row() -> None:
    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]
    part = PAGE.read_text(encoding="utf-8").split("\n## Extras\n", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"^\| `([\w-]+)` \|", part, re.MULTILINE)) == set(extras)


def test_the_commands_it_shows_exist() -> None:
    blocks = "\n".join(re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL))
    shown = set(re.findall(r"^hopgraph ([a-z-]+)", blocks, re.MULTILINE))
    known = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert {"doctor", "db", "query"} <= shown and shown - {"--help"} <= known, shown - known
