"""``hopgraph ingest``'s exit status on a real server (in-process through typer's runner): nothing
ingested because every document was skipped is a failure, and so is a directory with nothing to ingest
(unless --allow-empty); every document unchanged is a success; ``--groups`` is checked and re-writes a
document whose groups it changes."""

from __future__ import annotations

import uuid
from pathlib import Path

from typer.testing import CliRunner

from hopgraph.cli.main import app
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from tests.paths import empty_config


def test_ingest_fails_when_everything_was_skipped_and_not_when_unchanged(arcadedb: ServerInfo,
                                                                        tmp_path: Path) -> None:
    env = {"HOPGRAPH_CONFIG": empty_config(tmp_path), "HOPGRAPH_DATA_DIR": str(tmp_path / "data"),
           "HOPGRAPH_GRAPH__URI": arcadedb.uri, "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password,
           "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
           "HOPGRAPH_GRAPH__DATABASE": f"t{uuid.uuid4().hex[:12]}",
           "HOPGRAPH_RETRIEVAL__STAGE_CAP_MS": "none", "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "blob.txt").write_bytes(b"\x00\x01binary")
    (bad / "empty.md").write_text("  \n")

    def ingest(path: Path, *options: str) -> tuple[int, str]:
        out = CliRunner().invoke(app, ["ingest", "--no-progress", *options, str(path)], env=env)
        return out.exit_code, " ".join(out.output.split())

    code, said = ingest(bad)
    assert code == 2 and "nothing was ingested: all 2 documents were skipped" in said, said
    good = tmp_path / "good"
    good.mkdir()
    (good / "note.txt").write_text("Orla Vint tuned the carillon of Kelderwick.")
    assert ingest(good)[0] == 0
    code, said = ingest(good)
    assert code == 0 and "1 unchanged" in said, said  # nothing new, nothing wrong
    code, said = ingest(good, "--groups", "Not Valid")
    assert code == 2 and "invalid access group 'Not Valid'" in said, said
    code, said = ingest(good, "--groups", "hr, finance")
    assert code == 0 and "1 ingested" in said, said  # new groups re-write the document
    code, said = ingest(good, "--groups", "finance,hr")
    assert code == 0 and "1 unchanged" in said, said  # the same groups, in any order
    empty = tmp_path / "empty"
    empty.mkdir()
    code, said = ingest(empty)
    assert code == 2 and "nothing to ingest" in said, said  # before the stores are opened
    code, said = ingest(empty, "--allow-empty")
    assert code == 0 and "0 ingested" in said, said  # runs the post-steps, as the scale-out pass does
