"""The LangChain and LlamaIndex retrievers (hopgraph.integrations), on the real frameworks: over a local
platform with the real ArcadeDB and embedder, and over the real API served by uvicorn; the snippets of
docs/integrations.md run as written."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from hopgraph.app.platform import Platform
from hopgraph.core.errors import StoreUnavailableError
from hopgraph.core.records import QueryFilters
from hopgraph.core.service_settings import ApiSettings
from hopgraph.core.settings import Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.integrations import langchain as lc
from hopgraph.integrations import llamaindex as li
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import KEYS, READ_KEY, running_api
from tests.conftest import free_port, settings_for
from tests.paths import REPO_ROOT
from tests.processes import cli_env

#: four small documents, each the only one that answers its question
CORPUS = {
    "lighthouse.txt": "The Kessport Lighthouse stands on the northern cliffs above the harbour of Kessport. "
                      "It was designed by the engineer Tomas Brandt, and its lamp was first lit in 1871.",
    "orchard.txt": "Marisol Vega planted the Quillon Orchard in the valley of Ardel. The orchard grows forty "
                   "kinds of pear, and its cider is sold at the autumn market of Ardel.",
    "glacier.txt": "The Hollin Glacier lies in the Sarven range. The geologist Ingrid Falk mapped its crevasses "
                   "from a stone hut above the ice.",
    "sonata.txt": "The violinist Pavel Oren gave the first performance of the Sonata in Blue at Corvane Hall. "
                  "The composer Lidia March wrote the sonata for him.",
}
LIGHTHOUSE = "Who designed the Kessport Lighthouse?"
ORCHARD = "Who planted the Quillon Orchard?"
SONATA = "Which violinist first performed the Sonata in Blue?"
DOCS_PAGE = REPO_ROOT / "docs" / "integrations.md"
DOCS_ADDRESS = "http://127.0.0.1:8000"


@pytest.fixture(scope="module")
def loaded(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """A platform with the four documents ingested (the API's keys in its settings, for ``api_url``)."""
    root = tmp_path_factory.mktemp("integrations")
    folder = root / "corpus"
    folder.mkdir()
    for name, text in CORPUS.items():
        (folder / name).write_text(text + "\n", encoding="utf-8")
    settings = settings_for(arcadedb, root / "data", api=ApiSettings(api_keys=KEYS))
    with Platform(settings, embedder=embedder) as platform:
        report = platform.ingest([folder])
        assert report.documents_ingested == len(CORPUS), report
        yield platform


@pytest.fixture(scope="module")
def api_url(loaded: Platform) -> Iterator[str]:
    """The real FastAPI app, served by uvicorn on 127.0.0.1, over the loaded platform."""
    with running_api(loaded.settings, loaded) as url:
        yield url


def _file(source: str) -> str:
    return Path(source).name


def _check_documents(docs: list[Document], expected: str, top_k: int) -> None:
    assert docs and len(docs) <= top_k and all(isinstance(d, Document) for d in docs)
    best = docs[0].metadata
    assert _file(best["source"]) == expected, [d.metadata["source"] for d in docs]
    assert best["document_id"].startswith("doc_") and best["chunk_id"].startswith("chk_")
    assert best["rank"] == 1 and best["mode"] == "graph" and isinstance(best["entities"], list)
    assert docs[0].id == best["chunk_id"] and docs[0].page_content.strip() == CORPUS[expected]
    assert [d.metadata["rank"] for d in docs] == list(range(1, len(docs) + 1))
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)


def _check_nodes(hits: list[NodeWithScore], expected: str, top_k: int) -> None:
    assert hits and len(hits) <= top_k and all(isinstance(h, NodeWithScore) for h in hits)
    node = hits[0].node
    assert isinstance(node, TextNode) and _file(node.metadata["source"]) == expected, \
        [h.node.metadata["source"] for h in hits]
    assert node.node_id == node.metadata["chunk_id"] and node.text.strip() == CORPUS[expected]
    assert node.metadata["document_id"].startswith("doc_") and node.metadata["rank"] == 1
    assert hits[0].score == node.metadata["score"]
    assert [h.node.metadata["rank"] for h in hits] == list(range(1, len(hits) + 1))
    # an LLM sees the text with its source, not the bookkeeping
    shown = node.get_content(metadata_mode=MetadataMode.LLM)
    assert "source: " in shown and "chunk_id" not in shown and CORPUS[expected] in shown


# -- local platform ------------------------------------------------------------------------------------
def test_langchain_retriever_cites_the_right_file(loaded: Platform) -> None:
    retriever = lc.HopgraphRetriever(platform=loaded, top_k=3)
    _check_documents(retriever.invoke(LIGHTHOUSE), "lighthouse.txt", 3)
    _check_documents(asyncio.run(retriever.ainvoke(ORCHARD)), "orchard.txt", 3)
    direct = loaded.query(LIGHTHOUSE, mode="graph", top_k=3)
    assert [d.metadata["chunk_id"] for d in retriever.invoke(LIGHTHOUSE)] == \
        [r.citation.chunk_id for r in direct.results]


def test_llamaindex_retriever_cites_the_right_file(loaded: Platform) -> None:
    retriever = li.HopgraphRetriever(platform=loaded, top_k=3)
    _check_nodes(retriever.retrieve(ORCHARD), "orchard.txt", 3)
    _check_nodes(asyncio.run(retriever.aretrieve(SONATA)), "sonata.txt", 3)


def test_async_local_queries_can_run_together(loaded: Platform) -> None:
    retriever = lc.HopgraphRetriever(platform=loaded, top_k=2)

    async def three() -> list[list[Document]]:
        return list(await asyncio.gather(*(retriever.ainvoke(q) for q in (LIGHTHOUSE, ORCHARD, SONATA))))

    firsts = [_file(docs[0].metadata["source"]) for docs in asyncio.run(three())]
    assert firsts == ["lighthouse.txt", "orchard.txt", "sonata.txt"]


def test_mode_and_filters_reach_the_platform(loaded: Platform) -> None:
    both = "Who designed the Kessport Lighthouse, and who wrote the Sonata in Blue?"
    sonata_id = next(d.id for d in loaded.documents() if (d.source or "").endswith("sonata.txt"))
    unfiltered = lc.HopgraphRetriever(platform=loaded, mode="bm25", top_k=4).invoke(both)
    assert {_file(d.metadata["source"]) for d in unfiltered} >= {"lighthouse.txt", "sonata.txt"}
    docs = lc.HopgraphRetriever(platform=loaded, mode="bm25", top_k=4,
                                filters=QueryFilters(document_ids=[sonata_id])).invoke(both)
    assert docs and {d.metadata["document_id"] for d in docs} == {sonata_id}
    assert all(d.metadata["mode"] == "bm25" for d in docs)
    hits = li.HopgraphRetriever(platform=loaded, mode="bm25", top_k=1).retrieve(LIGHTHOUSE)
    assert len(hits) == 1 and hits[0].node.metadata["mode"] == "bm25"


def test_an_unknown_mode_of_a_local_platform_is_a_value_error(loaded: Platform) -> None:
    with pytest.raises(ValueError, match="unknown mode 'telepathy'"):
        lc.HopgraphRetriever(platform=loaded, mode="telepathy").invoke(LIGHTHOUSE)
    with pytest.raises(ValueError, match="unknown mode 'telepathy'"):
        asyncio.run(li.HopgraphRetriever(platform=loaded, mode="telepathy").aretrieve(LIGHTHOUSE))


# -- a running hopgraph serve ----------------------------------------------------------------------------
def test_both_retrievers_query_a_running_server(loaded: Platform, api_url: str) -> None:
    remote = lc.HopgraphRetriever(url=api_url + "/", api_key=READ_KEY, top_k=3)
    _check_documents(remote.invoke(SONATA), "sonata.txt", 3)
    _check_documents(asyncio.run(remote.ainvoke(LIGHTHOUSE)), "lighthouse.txt", 3)
    local = lc.HopgraphRetriever(platform=loaded, top_k=3).invoke(SONATA)
    assert [d.metadata for d in remote.invoke(SONATA)] == [d.metadata for d in local]  # the same citations

    nodes = li.HopgraphRetriever(url=api_url, api_key=READ_KEY, top_k=3)
    _check_nodes(nodes.retrieve(LIGHTHOUSE), "lighthouse.txt", 3)
    _check_nodes(asyncio.run(nodes.aretrieve(ORCHARD)), "orchard.txt", 3)


def test_the_key_defaults_to_the_environment(api_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPGRAPH_API_KEY", READ_KEY)
    _check_nodes(li.HopgraphRetriever(url=api_url, top_k=2).retrieve(ORCHARD), "orchard.txt", 2)
    _check_documents(lc.HopgraphRetriever(url=api_url, top_k=2).invoke(ORCHARD), "orchard.txt", 2)


def test_a_refused_request_raises_the_servers_message(api_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOPGRAPH_API_KEY", raising=False)
    bad_mode: list[Callable[[str], object]] = [
        lc.HopgraphRetriever(url=api_url, api_key=READ_KEY, mode="telepathy").invoke,
        li.HopgraphRetriever(url=api_url, api_key=READ_KEY, mode="telepathy").retrieve]
    for query in bad_mode:
        with pytest.raises(ValueError, match=r"answered 422: body\.mode: Input should be 'graph'") as err:
            query(LIGHTHOUSE)
        assert api_url in str(err.value)
    with pytest.raises(ValueError, match=r"answered 422: body\.mode"):
        asyncio.run(lc.HopgraphRetriever(url=api_url, api_key=READ_KEY, mode="telepathy").ainvoke(LIGHTHOUSE))
    with pytest.raises(ValueError, match=r"answered 422: body\.text"):
        asyncio.run(li.HopgraphRetriever(url=api_url, api_key=READ_KEY).aretrieve("   "))

    for key in (None, "not-a-key-of-this-server"):
        with pytest.raises(ValueError, match=r"answered 401: .*pass api_key=") as err:
            lc.HopgraphRetriever(url=api_url, api_key=key).invoke(LIGHTHOUSE)
        assert key is None or key not in str(err.value)  # a key is never repeated back


def test_an_unreachable_server_is_a_store_error() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(StoreUnavailableError, match=f"hopgraph serve at {url} did not answer"):
        lc.HopgraphRetriever(url=url).invoke(LIGHTHOUSE)
    with pytest.raises(StoreUnavailableError, match=f"hopgraph serve at {url} did not answer"):
        asyncio.run(li.HopgraphRetriever(url=url).aretrieve(LIGHTHOUSE))


# -- construction, secrecy, imports ----------------------------------------------------------------------
def test_one_backend_is_required_and_the_key_stays_secret(tmp_path: Path) -> None:
    platform = Platform(Settings(data_dir=tmp_path))  # opens nothing until used
    for make in (lc.HopgraphRetriever, li.HopgraphRetriever):
        cases: list[dict[str, Any]] = [{}, {"platform": platform, "url": "http://127.0.0.1:8000"}]
        for kwargs in cases:
            with pytest.raises(ValueError, match="give one of platform="):
                make(**kwargs)
        with pytest.raises(ValueError, match="http:// or https://"):
            make(url="127.0.0.1:8000")
        with pytest.raises(ValueError, match="top_k"):
            make(url="http://h", top_k=0)
    secret = "s3cret-key-value"
    chain = lc.HopgraphRetriever(url="http://127.0.0.1:8000", api_key=secret)
    index = li.HopgraphRetriever(url="http://127.0.0.1:8000", api_key=secret)
    for shown in (repr(chain), str(chain), json.dumps(chain.to_json()), repr(index), str(index)):
        assert secret not in shown
    assert chain.api_key is not None and chain.api_key.get_secret_value() == secret


def test_a_missing_framework_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """An import of the framework that fails (here: blocked in sys.modules) says what to pip install."""
    for module, blocked, extra in (("hopgraph.integrations.langchain", "langchain_core.retrievers", "langchain"),
                                   ("hopgraph.integrations.llamaindex", "llama_index.core.retrievers",
                                    "llamaindex")):
        monkeypatch.delitem(sys.modules, module)
        monkeypatch.setitem(sys.modules, blocked, None)
        with pytest.raises(ImportError, match=re.escape(f"pip install 'hopgraph[{extra}]'")):
            __import__(module)


def test_hopgraph_and_its_cli_import_no_framework() -> None:
    probe = ("import json, sys, hopgraph, hopgraph.cli.main, hopgraph.app.platform, hopgraph.integrations; "
             "print(json.dumps([m for m in sys.modules if m.startswith(('langchain', 'llama_index'))]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True,
                         env=cli_env())
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


# -- the manual ------------------------------------------------------------------------------------------
def _snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOCS_PAGE.read_text(encoding="utf-8"), re.DOTALL)


def test_the_integrations_page_snippets_run_as_written(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Each Python block of docs/integrations.md, exec'd as written in a fresh namespace: the local ones in
    an empty folder (their ``Settings(data_dir=".hopgraph")`` reach the session's graph server through the
    environment, as a user's ``HOPGRAPH_*`` variables would), the remote ones against a served platform on
    that data dir (only the address is the test server's). Each cites the observatory's file first."""
    snippets = _snippets()
    local = [s for s in snippets if "Platform(" in s]
    remote = [s for s in snippets if "url=" in s]
    assert len(local) == 2 and len(remote) == 2 and len(snippets) == 4
    assert all(DOCS_ADDRESS in s for s in remote)

    graph = settings_for(arcadedb, tmp_path / ".hopgraph").graph  # a fresh database, dropped with the module
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name, value in {"HOPGRAPH_CONFIG": str(tmp_path / "empty.toml"), "HOPGRAPH_GRAPH__URI": str(graph.uri),
                        "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password,
                        "HOPGRAPH_GRAPH__HTTP_PORT": str(graph.http_port),
                        "HOPGRAPH_GRAPH__DATABASE": graph.database,
                        "HOPGRAPH_RETRIEVAL__STAGE_CAP_MS": "none", "HOPGRAPH_API_KEY": READ_KEY}.items():
        monkeypatch.setenv(name, value)

    def run(snippet: str) -> list[str]:
        capsys.readouterr()
        exec(compile(snippet, str(DOCS_PAGE), "exec"), {"__name__": "docs_integrations"})
        lines = capsys.readouterr().out.strip().splitlines()
        assert lines and "observatory.txt" in lines[0] and lines[0].split()[0] == "1", lines
        return lines

    for snippet in local:
        assert len(run(snippet)) == 3

    settings = Settings(data_dir=".hopgraph", api=ApiSettings(api_keys=KEYS))
    with Platform(settings, embedder=embedder) as platform, running_api(settings, platform) as url:
        for snippet in remote:
            assert len(run(snippet.replace(DOCS_ADDRESS, url))) == 3
