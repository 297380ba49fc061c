"""Ingestion on Ray (``ingest.engine = "ray"``) on a real two-node Ray cluster simulated on this machine,
every node on the loopback range (127.0.0.2 and 127.0.0.3, two CPUs each): the stores end as after a
local ingest; a node removed mid-run has its batches taken by the actors left; a driver killed mid-run is
completed by a rerun; an unreachable cluster fails before anything is written; a server's ``POST
/documents`` and scheduled re-ingestion run on the cluster too; the actors load their models once over
consecutive ingests and run the threads they declare; a document spaCy cannot parse is a dead letter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import neo4j
import pytest

from hopgraph.app.doctor import diagnose
from hopgraph.app.platform import Platform
from hopgraph.core.errors import StoreUnavailableError
from hopgraph.core.service_settings import ScheduledSource, SchedulerSettings
from hopgraph.core.settings import IngestSettings, Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.graphdb.records import IngestRun
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import running_api, wait_job
from tests.paths import REPO_ROOT, SHARED_DATA, empty_config
from tests.processes import cli_env

from .conftest import settings_for

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

HOTPOT = SHARED_DATA / "hotpotqa-100"
DOCS = 18  # three parts of 6 in the model-loading test
#: how long a wait for an ingest's progress may last: the waits end when the progress is seen, so this bound
#: only stops a broken run and is wide enough for a loaded machine
PATIENCE_S = 600
pytestmark = pytest.mark.timeout(1800)
MODES = ("dense", "bm25", "graph", "local", "global", "hybrid", "mix")
_NODE_ARGS: dict[str, Any] = {"num_cpus": 2, "object_store_memory": 96 * 2**20}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head at 127.0.0.2 and a worker node at 127.0.0.3, two CPUs each (one parse and one embed actor
    each: a node removed leaves one of each kind)."""
    os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
    c = Cluster(initialize_head=True, head_node_args={"node_ip_address": "127.0.0.2", "include_dashboard": False,
                                                       **_NODE_ARGS})
    try:
        c.add_node(node_ip_address="127.0.0.3", **_NODE_ARGS)
        c.wait_for_nodes()
        yield c
    finally:
        c.shutdown()


def _workers(c: Cluster) -> list[Any]:
    return [n for n in c.list_all_nodes() if n is not c.head_node]


def _node_ips(c: Cluster) -> list[str]:
    """The node addresses the cluster reports (ray.nodes(), from a connection of its own)."""
    ray.init(address=c.address, _node_ip_address="127.0.0.2", log_to_driver=False)
    try:
        return sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    with (HOTPOT / "corpus.jsonl").open() as fh:
        path.write_text("".join(line for _, line in zip(range(DOCS), fh, strict=False)))
    return path


def _settings(arcadedb: ServerInfo, data_dir: Path, address: str | None = None) -> Settings:
    """One embedding thread on both engines: the same float sums, so the same vectors."""
    ingest = IngestSettings(doc_batch=3, engine="ray" if address else "local", ray_address=address, embed_threads=1)
    return settings_for(arcadedb, data_dir, ingest=ingest)


def _state(p: Platform) -> dict[str, Any]:
    """Graph and vector counts, the ids of every graph item and vector, and whether doctor is clean."""
    st = p.status()
    ids = {label: sorted(r["id"] for r in p._store.read(f"MATCH (n:{label}) RETURN n.id AS id"))
           for label in ("Document", "Chunk", "Entity")}
    ids["RELATED"] = sorted(r["id"] for r in p._store.read("MATCH ()-[r:RELATED]->() RETURN r.id AS id"))
    for collection in ("chunks", "entities", "relationships", "sections"):
        ids[f"vec_{collection}"] = sorted(p.vectors.export(collection)[0])
    dupes = p._store.read("MATCH (c:Chunk) WITH c.id AS id, count(*) AS n WHERE n > 1 RETURN count(id) AS d")
    return {"counts": {**st["graph"], **{f"vec_{k}": v for k, v in st["vectors"].items()}}, "ids": ids,
            "doctor": [c.name for c in diagnose(p) if not c.ok], "dupes": dupes[0]["d"]}


def _rankings(p: Platform) -> dict[tuple[str, str], list[str]]:
    with (HOTPOT / "queries.jsonl").open() as fh:
        queries = [json.loads(line)["text"] for _, line in zip(range(3), fh, strict=False)]
    return {(m, q): [r.citation.chunk_id for r in p.query(q, mode=m, top_k=5).results]
            for m in MODES for q in queries}


@pytest.fixture(scope="module")
def local(arcadedb: ServerInfo, corpus: Path, embedder: SentenceTransformerEmbedder,
          tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The state and rankings of a local ingest of the corpus."""
    with Platform(_settings(arcadedb, tmp_path_factory.mktemp("local")), embedder=embedder) as p:
        p.ingest([corpus])
        return {"state": _state(p), "rankings": _rankings(p)}


def test_nodes_are_on_loopback(cluster: Cluster) -> None:
    assert _node_ips(cluster) == ["127.0.0.2", "127.0.0.3"]


def test_an_unreachable_cluster_fails_before_anything_is_written(arcadedb: ServerInfo, corpus: Path,
                                                                embedder: SentenceTransformerEmbedder,
                                                                tmp_path: Path) -> None:
    with Platform(_settings(arcadedb, tmp_path, "127.0.0.9:9"), embedder=embedder) as p:
        with pytest.raises(StoreUnavailableError, match=r"cannot reach the Ray cluster at 127\.0\.0\.9:9"):
            p.ingest([corpus])
        assert p.status()["graph"].get("Document", 0) == 0
        assert not any(p.status()["vectors"].values())


def test_a_ray_ingest_leaves_what_a_local_ingest_leaves(cluster: Cluster, arcadedb: ServerInfo, corpus: Path,
                                                         embedder: SentenceTransformerEmbedder,
                                                         local: dict[str, Any], tmp_path: Path) -> None:
    with Platform(_settings(arcadedb, tmp_path, cluster.address), embedder=embedder) as p:
        report = p.ingest([corpus])
        engine = p._ingestor()._ray
        assert engine is not None and engine.nodes == ["127.0.0.2", "127.0.0.3"]
        assert report.documents_ingested == DOCS and report.stage_seconds["ray_extract"] > 0
        state = _state(p)
        assert state == local["state"] and state["doctor"] == [] and state["dupes"] == 0
        assert _rankings(p) == local["rankings"]
    assert not ray.is_initialized()  # the engine left the cluster; the cluster runs on


def _complete(arcadedb: ServerInfo, database: str) -> int:
    with neo4j.GraphDatabase.driver(arcadedb.uri, auth=("root", arcadedb.password)) as drv:
        try:
            with drv.session(database=database) as ses:
                rec = ses.run("MATCH (d:Document) WHERE d.status = 'complete' RETURN count(d) AS n").single()
                return int(rec["n"]) if rec else 0
        except neo4j.exceptions.Neo4jError:
            return 0  # the database is not created yet


def test_a_killed_driver_is_completed_by_a_rerun(cluster: Cluster, arcadedb: ServerInfo, corpus: Path,
                                                 embedder: SentenceTransformerEmbedder, local: dict[str, Any],
                                                 tmp_path: Path) -> None:
    s = _settings(arcadedb, tmp_path / "data")
    env = cli_env({"HOPGRAPH_DATA_DIR": str(s.data_dir), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
                   "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
                   "HOPGRAPH_GRAPH__DATABASE": s.graph.database, "HOPGRAPH_INGEST__DOC_BATCH": "2",
                   "HOPGRAPH_CONFIG": empty_config(tmp_path)})
    proc = subprocess.Popen([sys.executable, "-m", "hopgraph.cli", "ingest", "--no-progress", "--ray", cluster.address,
                             str(corpus)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    complete, deadline = 0, time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline and proc.poll() is None and complete < 4:
        complete = _complete(arcadedb, s.graph.database)
        time.sleep(0.05)
    if proc.poll() is not None:
        pytest.fail(f"ingest ended before it could be killed: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 4 <= complete < DOCS
    rerun = s.model_copy(update={"ingest": IngestSettings(doc_batch=3, engine="ray", ray_address=cluster.address)})
    with Platform(rerun, embedder=embedder) as p:
        report = p.ingest([corpus])
        assert report.documents_unchanged >= complete and report.documents_ingested + report.documents_unchanged == DOCS
        state = _state(p)
    assert state["counts"] == local["state"]["counts"] and state["ids"] == local["state"]["ids"]
    assert state["doctor"] == [] and state["dupes"] == 0


def test_a_node_removed_mid_run_has_its_batches_retried(cluster: Cluster, arcadedb: ServerInfo, corpus: Path,
                                                         embedder: SentenceTransformerEmbedder,
                                                         local: dict[str, Any], tmp_path: Path) -> None:
    """The worker node dies with batches on it (its worker processes killed with it): Ray runs them
    again on the head, and the run ends with the local ingest's graph and vectors, no duplicate."""
    s = _settings(arcadedb, tmp_path, cluster.address)
    s = s.model_copy(update={"ingest": s.ingest.model_copy(update={"doc_batch": 1})})
    done: dict[str, Any] = {}
    with Platform(s, embedder=embedder) as p:
        def run() -> None:
            try:
                done["report"] = p.ingest([corpus])
            except BaseException as exc:  # reported by the test below
                done["error"] = exc

        thread = threading.Thread(target=run)
        thread.start()
        deadline = time.monotonic() + PATIENCE_S
        while time.monotonic() < deadline and _complete(arcadedb, s.graph.database) < 3 and thread.is_alive():
            time.sleep(0.05)
        assert thread.is_alive(), done
        cluster.remove_node(_workers(cluster)[0])
        thread.join(timeout=PATIENCE_S)
        assert not thread.is_alive() and "error" not in done, done
        assert done["report"].documents_ingested == DOCS
        engine = p._ingestor()._ray
        assert engine is not None and engine.by_node["127.0.0.3"] > 0  # the removed node had worked
        assert engine.by_node.total() == DOCS  # one result per batch of one document: none twice
        state = _state(p)
    assert state["counts"] == local["state"]["counts"] and state["ids"] == local["state"]["ids"]
    assert state["doctor"] == [] and state["dupes"] == 0
    assert _node_ips(cluster) == ["127.0.0.2"]


def test_a_server_ingests_uploads_and_scheduled_sources_on_the_cluster(cluster: Cluster, arcadedb: ServerInfo,
                                                                      embedder: SentenceTransformerEmbedder,
                                                                      tmp_path: Path) -> None:
    """``ingest.engine = "ray"`` in a server's settings: a ``POST /documents`` job and a scheduled
    re-ingestion (the scheduler's own trigger) are both chunked, extracted and embedded on the cluster."""
    sample = REPO_ROOT / "hopgraph" / "sample"
    watched = tmp_path / "watched"
    watched.mkdir()
    for name in ("curie.txt", "turing.txt"):
        (watched / name).write_bytes((sample / name).read_bytes())
    s = _settings(arcadedb, tmp_path / "data", cluster.address).model_copy(update={"scheduler": SchedulerSettings(
        sources=[ScheduledSource(name="watched", paths=[str(watched)], interval_s=2)])})
    with Platform(s, embedder=embedder) as p, running_api(s, p) as url, httpx.Client(base_url=url, timeout=60) as api:
        posted = api.post("/documents", files=[("files", ("hopper.txt", (sample / "hopper.txt").read_bytes()))])
        assert posted.status_code == 202, posted.text
        job = wait_job(api, posted.json()["id"])
        assert job["status"] == "succeeded" and job["result"]["documents_ingested"] == 1, job
        deadline, runs = time.monotonic() + PATIENCE_S, list[IngestRun]()
        while time.monotonic() < deadline and not runs:  # the scheduler's first run, as recorded in the graph
            runs = [r for r in p.browser.ingest_runs(source="watched") if r.status == "succeeded"]
            time.sleep(0.2)
        assert runs and runs[0].report["documents_ingested"] == 2, p.browser.ingest_runs(source="watched")
        engine = p._ingestor()._ray
        # the module's cluster (an earlier test may have removed its second node)
        assert engine is not None and engine.nodes and set(engine.nodes) <= {"127.0.0.2", "127.0.0.3"}
        assert engine.by_node.total() == 2  # one batch uploaded, one batch of the two watched files
        assert p.status()["graph"]["Document"] == 3
    assert not ray.is_initialized()


def test_tasks_are_given_no_credentials() -> None:
    """A task's arguments are pickled in clear and shipped to every worker: the engine gives them the
    models' and the chunker's settings only, never the graph password or the Qdrant and LLM keys."""
    import pickle

    from hopgraph.core.settings import GraphSettings, LlmSettings, VectorSettings
    from hopgraph.ingest.ray_engine import RayEngine

    secrets = ("graph-pass-7f3a", "qdrant-key-91bc", "llm-key-c0de")
    s = Settings(graph=GraphSettings(password=secrets[0]), vectors=VectorSettings(api_key=secrets[1]),
                 llm=LlmSettings(api_key=secrets[2]), ingest=IngestSettings(engine="ray", max_document_chunks=77))
    shipped = RayEngine(s).task_settings()
    blob = pickle.dumps(shipped)
    assert not [x for x in secrets if x.encode() in blob]
    assert shipped.max_document_chunks == 77 and shipped.embedder == s.embedder and shipped.extraction == s.extraction


def test_the_plan_gives_each_kind_the_cpus_it_runs() -> None:
    from hopgraph.ingest.ray_pools import RayUnavailableError, plan_pools

    plan = plan_pools({"a": (2, 0), "b": (2, 0)}, threads=1)  # one of each kind per node
    assert [(n.parse, n.embed) for n in plan.nodes] == [(1, 1), (1, 1)] and plan.embed_resources == {"num_cpus": 1}
    plan = plan_pools({"a": (4, 0), "b": (4, 0)}, threads=2)  # half the CPUs embed, two threads per actor
    assert plan.embed_actors == 2 and plan.parse_actors == 4 and plan.embed_resources == {"num_cpus": 2}
    plan = plan_pools({"a": (1, 0), "b": (1, 0)}, threads=2)  # no node has two CPUs: one thread
    assert plan.embed_threads == 1 and plan.embed_actors == 1 and plan.parse_actors == 1
    plan = plan_pools({"cpu": (8, 0), "gpu": (4, 2)}, threads=2)  # GPU shares embed; every other CPU parses
    assert [(n.parse, n.embed) for n in plan.nodes] == [(8, 0), (0, 4)]
    assert plan.embed_resources == {"num_cpus": 1, "num_gpus": 0.5} and plan.embed_threads == 1
    assert plan_pools({"cpu": (8, 0), "gpu": (4, 2)}, threads=2, gpu_embed=False).embed_resources == {"num_cpus": 2}
    with pytest.raises(RayUnavailableError, match="needs two"):
        plan_pools({"a": (1, 0)}, threads=1)


def test_models_load_once_per_actor_across_consecutive_ingests(cluster: Cluster, arcadedb: ServerInfo,
                                                               corpus: Path, embedder: SentenceTransformerEmbedder,
                                                               tmp_path: Path) -> None:
    lines = corpus.read_text().splitlines(keepends=True)
    with Platform(_settings(arcadedb, tmp_path / "data", cluster.address), embedder=embedder) as p:
        ingestor = p._ingestor()
        engine = ingestor._ray
        assert engine is not None
        loads, actors = [], []
        for i in range(3):  # three runs of one platform (a server's uploads), new documents each time
            # an alias map that grows between runs (ids no extraction produces: the results stay the same)
            ingestor.aliases.update({f"ent_unseen_{i}_{j}": "ent_unseen" for j in range(200 if i == 0 else 5)})
            part = tmp_path / f"part{i}.jsonl"
            part.write_text("".join(lines[i * 6:(i + 1) * 6]))
            assert p.ingest([part]).documents_ingested == 6
            loads.append(engine.model_loads)
            actors.append(sorted((i["kind"], i["pid"], i["loads"]) for i in engine.actor_infos()))
        # one parse and one embed actor per node (an earlier test may have removed the second node), the same
        # ones in every run, one model load each
        n = len(engine.nodes)
        assert [k for k, _, _ in actors[0]] == ["embed"] * n + ["parse"] * n
        assert actors[1] == actors[0] and actors[2] == actors[0] and {c for _, _, c in actors[0]} == {1}
        assert loads == [2 * n] * 3
        shipper = engine._aliases
        assert shipper is not None and len(shipper.chain.links) >= 3  # a base, then a delta per run
        # every entry went to the object store once, and each worker process fetched it at most once
        assert shipper.entries_sent == len(shipper.shipped) >= 210  # (the last run's merges are sent next run)
        assert shipper.shipped.items() <= ingestor.aliases.items()
        assert 0 < engine.alias_entries_fetched <= loads[-1] * shipper.entries_sent
        assert ray.is_initialized()  # connected between runs
    assert not ray.is_initialized()  # and left with the platform
