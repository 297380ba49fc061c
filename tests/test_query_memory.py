"""A query's memory follows its candidates, never the corpus: pcst and gnn run on a generated corpus of
3,000 documents and 40,000 entities in a process whose address space is capped a little above what the
served state takes (the whole-graph export they once built per index state needs several times the cap
and dies), and a query over ``retrieval.query_memory_mb`` is refused with an error naming it while the
retriever goes on serving."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from hopgraph.core.budget import QueryMemoryError, ShortOfMemoryError, check_budget
from tests.paths import REPO_ROOT
from tests.processes import cli_env

#: the address space a pcst/gnn query may add to the process once the state is served (MB)
HEADROOM_MB = 768

PROBE = textwrap.dedent(f"""
    import resource, sys, tempfile
    from pathlib import Path
    from benchmarks.memory import synthetic_retriever
    from hopgraph.core.budget import QueryMemoryError
    from hopgraph.core.memory import keep_freed_memory
    from hopgraph.core.settings import RetrievalSettings
    import hopgraph.retrieval.modes.subgraph  # the pcst and gnn modes: their libraries mapped before the cap

    keep_freed_memory()  # as the platform does: one heap, nothing handed back
    with tempfile.TemporaryDirectory() as tmp:
        retriever, state = synthetic_retriever(Path(tmp), 3000, 40000, 200000)
        question = "what links entity 5 and entity 38 in w1 w2?"
        retriever.query(question, mode="graph")  # the walk and the query embedding, built before the cap
        size = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
        cap = size + {HEADROOM_MB} * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        for mode in ("pcst", "gnn", "pcst", "gnn"):
            found = retriever.query(question, mode=mode)
            assert found.results, mode
            print(mode, "ok", len(found.results), flush=True)
        tight = retriever.cfg.model_copy(update={{"query_memory_mb": 0.01}})
        try:
            retriever.query(question, mode="pcst", cfg=tight)
        except QueryMemoryError as exc:
            print("refused:", exc, flush=True)
        print("after:", len(retriever.query(question, mode="pcst").results), flush=True)
""")


@pytest.mark.integration
@pytest.mark.timeout(900)
def test_pcst_and_gnn_stay_within_a_capped_address_space() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO_ROOT, env=cli_env(), capture_output=True,
                         text=True, timeout=840)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines if " ok " in line] == ["pcst", "gnn", "pcst", "gnn"]
    refused = next(line for line in lines if line.startswith("refused:"))
    assert "retrieval.query_memory_mb" in refused and "retrieval.modes.pcst.candidates" in refused
    assert next(line for line in lines if line.startswith("after:")) != "after: 0"


def test_check_budget_names_the_setting_and_the_size() -> None:
    check_budget(10 * 2**20, 64, "a small thing")  # within the budget and the host's memory: nothing
    with pytest.raises(QueryMemoryError, match=r"about 100 MB, over retrieval.query_memory_mb \(64 MB\)"):
        check_budget(100 * 2**20, 64, "the PCST/GNN subgraph of 9000 candidates (retrieval.modes.pcst.candidates)")
    with pytest.raises(ShortOfMemoryError, match="try again later"):
        check_budget(2**60, 2**50, "a huge thing")  # allowed by the budget, more than any host has
