"""Red team, issue 79 item 2: the Cypher console reads its collection's database and nothing else. Over a
real HTTP server on ArcadeDB, an admin runs a long statement in collection `payroll` while a key limited to
collection `teama` posts ``{"query": "SHOW TRANSACTIONS"}`` to ``/cypher?collection=teama``; ArcadeDB lists
the transactions of every database on the server, so the answer once named `payroll`'s database and
carried the admin's statement word for word. It is refused now, as is every other command that sees the
whole server; SHOW INDEXES, which the guard allows, lists `teama`'s indexes and not `payroll`'s."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from hopgraph.api.auth import hash_key
from hopgraph.app.platform import Platform
from hopgraph.core.collections import placed
from hopgraph.core.service_settings import ApiKey, ApiSettings
from hopgraph.core.settings import Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import running_api
from tests.conftest import settings_for

ROOT, TEAMA = "cypher-root-key", "cypher-teama-key"
KEYS = [ApiKey(name="root", sha256=hash_key(ROOT), scope="admin", collections=["*"]),
        ApiKey(name="teama", sha256=hash_key(TEAMA), scope="read", collections=["teama"])]
SECRET = "payroll-bonus-list-7731"
#: the admin's statement in `payroll`: it runs until its 4 s limit, and names the secret literally
SLOW = ("UNWIND range(1, 3000) AS a UNWIND range(1, 3000) AS b UNWIND range(1, 3000) AS c "
        f"WITH c WHERE '{SECRET}' <> '' RETURN count(*) AS n")


@pytest.fixture(scope="module")
def served(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Settings]]:
    s = settings_for(arcadedb, tmp_path_factory.mktemp("redteam-cypher") / "data", api=ApiSettings(api_keys=KEYS))
    with Platform(s, embedder=embedder) as platform, running_api(s, platform) as base:
        with httpx.Client(base_url=base, headers={"X-API-Key": ROOT}, timeout=60) as admin:
            for name in ("teama", "payroll"):
                assert admin.post("/collections", json={"name": name}).status_code == 201
        yield base, s


def _detail(r: httpx.Response) -> str:
    return str(r.json().get("detail"))


def test_show_transactions_does_not_cross_collections(served: tuple[str, Settings]) -> None:
    base, s = served
    payroll_db = placed(s, "payroll").graph.database
    answers: list[httpx.Response] = []

    def admin_statement() -> None:
        with httpx.Client(base_url=base, headers={"X-API-Key": ROOT}, timeout=60) as admin:
            answers.append(admin.post("/cypher", params={"collection": "payroll"},
                                      json={"query": SLOW, "timeout_s": 4}))

    running = threading.Thread(target=admin_statement)
    running.start()
    try:
        with httpx.Client(base_url=base, headers={"X-API-Key": TEAMA}, timeout=60) as teama:
            assert teama.post("/cypher", params={"collection": "payroll"},
                              json={"query": "RETURN 1 AS x"}).status_code == 403  # not its collection
            deadline = time.monotonic() + 3.5
            while True:  # the attack, while the admin's statement runs
                r = teama.post("/cypher", params={"collection": "teama"}, json={"query": "SHOW TRANSACTIONS"})
                if r.status_code != 200 or SECRET in r.text or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
    finally:
        running.join()
    assert answers and answers[0].status_code == 504, answers  # the admin's statement was running throughout
    leaked = [w for w in (SECRET, payroll_db, "payroll") if w in r.text]
    assert r.status_code in (400, 403) and not leaked, (r.status_code, leaked, r.text[:500])
    assert "SHOW TRANSACTIONS is refused" in _detail(r) and "every database on the server" in _detail(r)


@pytest.mark.parametrize("query", [
    "show transactions yield database, currentQuery return database, currentQuery",
    "/* x */ SHOW TRANSACTIONS", "SHOW USERS", "SHOW CURRENT USER", "SHOW DATABASES",
    "TERMINATE TRANSACTIONS 'q1'", "CALL dbms.listQueries()", "CALL dbms.listDatabases()",
    "CALL dbms.showCurrentUser()", "USE other MATCH (n) RETURN n", "RETURN sql.version() AS v", "BEGIN",
])
def test_server_wide_commands_are_refused(served: tuple[str, Settings], query: str) -> None:
    base, _ = served
    with httpx.Client(base_url=base, headers={"X-API-Key": TEAMA}, timeout=60) as teama:
        r = teama.post("/cypher", params={"collection": "teama"}, json={"query": query})
    assert r.status_code == 400, (query, r.text)
    said = ("refused", "does not begin a read statement", "write clause", "not on the read-only allow-list")
    assert any(w in _detail(r) for w in said), (query, r.text)  # refused by the guard, not by ArcadeDB
    assert "payroll" not in r.text


def test_show_indexes_lists_the_current_database_only(served: tuple[str, Settings], arcadedb: ServerInfo) -> None:
    """The guard allows SHOW INDEXES / CONSTRAINTS because ArcadeDB lists the current database's alone."""
    base, s = served
    payroll_db = placed(s, "payroll").graph.database
    made = httpx.post(f"http://{arcadedb.host}:{arcadedb.http_port}/api/v1/command/{payroll_db}",
                      auth=("root", arcadedb.password), timeout=60,
                      json={"language": "cypher", "command": "CREATE INDEX payroll_only FOR (n:Payslip) ON (n.amount)"})
    assert made.status_code == 200, made.text
    with httpx.Client(base_url=base, timeout=60) as client:
        for key, collection, sees in ((ROOT, "payroll", True), (TEAMA, "teama", False)):
            for query in ("SHOW INDEXES YIELD name RETURN name", "SHOW CONSTRAINTS"):
                r = client.post("/cypher", params={"collection": collection}, json={"query": query},
                                headers={"X-API-Key": key})
                assert r.status_code == 200, r.text
            r = client.post("/cypher", params={"collection": collection}, headers={"X-API-Key": key},
                            json={"query": "SHOW INDEXES YIELD name RETURN name"})
            assert r.json()["rows"] and (["payroll_only"] in r.json()["rows"]) == sees, (collection, r.json())
