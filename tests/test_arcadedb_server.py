"""Lifecycle of the embedded ArcadeDB server: start, find, stale pid, port clash, restart."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import neo4j
import pytest

from hopgraph.core.settings import GraphSettings, Settings
from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB, GraphServerError, ServerInfo, java_command
from tests.paths import empty_config
from tests.processes import cli_env

from .conftest import TEST_JVM_OPTIONS, server_settings


def test_start_find_restart_keeps_data(tmp_path: Path) -> None:
    cfg = server_settings()
    server = EmbeddedArcadeDB(tmp_path, cfg)
    info = server.ensure_running()
    try:
        # a second process finds the running server instead of starting another
        code = (
            "import sys; from pathlib import Path; from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB;"
            "from hopgraph.core.settings import GraphSettings;"
            f"i = EmbeddedArcadeDB(Path({str(tmp_path)!r}), GraphSettings(bolt_port={cfg.bolt_port}, "
            f"http_port={cfg.http_port})).ensure_running(); print(i.pid)"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env=cli_env())
        assert int(out.stdout.strip()) == info.pid
        with neo4j.GraphDatabase.driver(info.uri, auth=("root", info.password)) as drv, \
                drv.session(database=cfg.database) as s:
            s.execute_write(lambda tx: tx.run("MERGE (n:Probe {id: 'p1'}) SET n.v = 42").consume())
    finally:
        assert server.stop()
    assert server.status() is None
    assert not server.stop()  # stopping twice is harmless
    info2 = server.ensure_running()  # data survives the restart
    try:
        assert info2.pid != info.pid
        with neo4j.GraphDatabase.driver(info2.uri, auth=("root", info2.password)) as drv, \
                drv.session(database=cfg.database) as s:
            assert s.run("MATCH (n:Probe {id: 'p1'}) RETURN n.v AS v").single()["v"] == 42
    finally:
        server.stop()


def test_stale_pid_file_is_replaced(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cfg = server_settings()
    server = EmbeddedArcadeDB(tmp_path, cfg)
    dead = subprocess.Popen([sys.executable, "-c", "pass"], env=cli_env())
    dead.wait()
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "server.json").write_text(json.dumps(
        {"pid": dead.pid, "host": "127.0.0.1", "bolt_port": cfg.bolt_port, "http_port": cfg.http_port}))
    assert server.status() is None
    assert "stale" in caplog.text
    # a live pid that is not our server is stale too
    (tmp_path / "server.json").write_text(json.dumps(
        {"pid": os.getpid(), "host": "127.0.0.1", "bolt_port": cfg.bolt_port, "http_port": cfg.http_port}))
    assert server.status() is None


def test_port_in_use_gives_a_clear_message(tmp_path: Path) -> None:
    cfg = server_settings()
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", cfg.bolt_port))
        blocker.listen()
        with pytest.raises(GraphServerError, match=rf"port {cfg.bolt_port} .* in use.*BOLT_PORT"):
            EmbeddedArcadeDB(tmp_path, cfg).ensure_running()
    assert not (tmp_path / "server.json").exists()


def test_auto_start_off_says_how_to_start(tmp_path: Path) -> None:
    cfg = server_settings(auto_start=False)
    with pytest.raises(GraphServerError, match="hopgraph db start"):
        EmbeddedArcadeDB(tmp_path, cfg).ensure_running()


def test_jvm_options_reach_the_server_before_its_settings(arcadedb: ServerInfo, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's server was started with ``TEST_JVM_OPTIONS`` (``graph.jvm_options``), placed before the
    argument file; the setting reads from the environment as a JSON list."""
    args = Path(f"/proc/{arcadedb.pid}/cmdline").read_bytes().split(b"\0")
    at = next(i for i, a in enumerate(args) if a.startswith(b"@"))
    assert [a.decode() for a in args[at - len(TEST_JVM_OPTIONS):at]] == TEST_JVM_OPTIONS
    monkeypatch.setenv("HOPGRAPH_CONFIG", empty_config(tmp_path))
    monkeypatch.setenv("HOPGRAPH_GRAPH__JVM_OPTIONS", '["-Xss2m", "-XX:+UseSerialGC"]')
    assert Settings().graph.jvm_options == ["-Xss2m", "-XX:+UseSerialGC"]


def test_a_collector_in_jvm_options_replaces_the_default_one(tmp_path: Path) -> None:
    """The JVM refuses two collectors: one named in ``graph.jvm_options`` is the only one it gets."""
    def collectors(cmd: list[str]) -> list[str]:
        return [a for a in cmd if a.startswith("-XX:+Use") and a.endswith("GC")]

    assert len(collectors(java_command(tmp_path, GraphSettings()))) == 1
    chosen = java_command(tmp_path, GraphSettings(jvm_options=["-XX:+UseSerialGC"]))
    assert collectors(chosen) == ["-XX:+UseSerialGC"]
    jvm = chosen[:next(i for i, a in enumerate(chosen) if a.startswith("@"))]
    out = subprocess.run([*jvm, "-version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_the_root_password_is_never_on_a_command_line_or_in_a_log(arcadedb: ServerInfo, tmp_path: Path) -> None:
    """The session's server got its password from a mode-600 argument file: ``ps`` shows a path only."""
    cmdline = Path(f"/proc/{arcadedb.pid}/cmdline").read_bytes()
    assert arcadedb.password.encode() not in cmdline and b"rootPassword" not in cmdline
    argfile = next(a for a in cmdline.split(b"\0") if a.startswith(b"@"))[1:].decode()
    assert os.stat(argfile).st_mode & 0o777 == 0o600
    log = Path(argfile).parent / "server.log"
    assert arcadedb.password not in log.read_text(encoding="utf-8", errors="replace")
    # the CLI never prints it either, though it comes from the environment
    env = {**os.environ, "HOPGRAPH_DATA_DIR": str(tmp_path / "d"), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
           "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
           "HOPGRAPH_GRAPH__DATABASE": "secretcheck", "HOPGRAPH_LOG_LEVEL": "DEBUG",
           "HOPGRAPH_CONFIG": empty_config(tmp_path)}
    for args in (["status", "--json"], ["status"], ["db", "status"]):
        out = subprocess.run([sys.executable, "-m", "hopgraph.cli", *args], capture_output=True, text=True,
                             env=cli_env(env), timeout=300)
        assert out.returncode in (0, 3), out.stderr
        assert arcadedb.password not in out.stdout + out.stderr, args


def test_secret_settings_are_masked(tmp_path: Path) -> None:
    from hopgraph.core.settings import Settings

    s = Settings(graph={"password": "pw-123"}, vectors={"api_key": "qk-456"}, llm={"api_key": "sk-789"},
                 data_dir=tmp_path)  # type: ignore[arg-type]
    shown = repr(s) + str(s.model_dump()) + s.model_dump_json()
    assert not any(secret in shown for secret in ("pw-123", "qk-456", "sk-789"))


def test_a_runaway_statement_is_stopped_on_the_server(tmp_path: Path) -> None:
    """ArcadeDB ignores the driver's transaction timeout. Exploration runs over its HTTP API, whose
    statement is cancelled when the client disconnects at the limit; every other statement has the
    server's own command timeout (graph.command_timeout_s) as a backstop. Either way the server's CPU
    goes back to idle."""
    from hopgraph.core.errors import TimeLimitError
    from hopgraph.core.settings import Settings
    from hopgraph.graphdb.factory import open_graph_store

    cfg = server_settings(command_timeout_s=3.0)
    server = EmbeddedArcadeDB(tmp_path / "arcadedb", cfg)
    info = server.ensure_running()

    def ticks() -> int:
        return sum(int(x) for x in Path(f"/proc/{info.pid}/stat").read_text().split()[13:15])

    def idle_after() -> int:
        time.sleep(1.5)
        before = ticks()
        time.sleep(2.0)
        return ticks() - before  # < 0.5 s of CPU in 2 s: the statement is gone, not running on

    try:
        graph = GraphSettings(**{**cfg.model_dump(exclude={"password"}), "uri": info.uri, "password": info.password})
        store = open_graph_store(Settings(data_dir=tmp_path, graph=graph))
        store._write(lambda tx: tx.run("UNWIND range(1, 300) AS i CREATE (:Probe {name: 'n' + toString(i)})")
                     .consume())
        cross = ("MATCH (a:Probe),(b:Probe),(c:Probe),(d:Probe) WHERE a.name < b.name AND b.name < c.name "
                 "AND c.name < d.name RETURN count(*)")
        t0 = time.monotonic()
        with pytest.raises(TimeLimitError, match="1 s limit"):
            store.explore(cross, timeout_s=1.0)
        assert time.monotonic() - t0 < 120  # stopped at the limit, not hours later when the statement would end
        assert idle_after() < 50
        with pytest.raises(neo4j.exceptions.ClientError, match=r"arcadedb\.command\.timeout"):
            store.read(cross)  # not exploration: the server's backstop stops it at 3 s
        assert idle_after() < 50
        store.close()
    finally:
        server.stop()
