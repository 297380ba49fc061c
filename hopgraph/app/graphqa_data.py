"""Graph-QA datasets: questions each answered from one graph document.

Two layouts: ExplaGraphs (``train_dev.tsv``: ``arg1``, ``arg2``, ``label`` support/counter and the
explanation graph as ``(head; relation; tail)`` triples), and a generic JSONL where every line is a
graph document (``id``, ``nodes``, ``edges``) with ``question``, ``answer`` and optional
``gold_nodes`` (the labels of the nodes the answer needs).
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopgraph.core.errors import BadInputError, NotFoundError

_TRIPLE = re.compile(r"\(([^;()]+);([^;()]+);([^;()]+)\)")


@dataclass
class GraphQuestion:
    """A question, its answer, and the graph document (a JSONL-ready record) it is asked about."""

    id: str
    question: str
    answer: str
    record: dict[str, Any]
    gold_nodes: list[str] = field(default_factory=list)


def triples_record(rid: str, triples: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A graph document of ``(head, relation, tail)`` triples: a node per distinct concept."""
    nodes: dict[str, str] = {}
    for h, _, t in triples:
        for label in (h, t):
            nodes.setdefault(label.strip().lower(), label.strip())
    return {"id": rid, "nodes": [{"id": k, "label": v} for k, v in nodes.items()],
            "edges": [{"source": h.strip().lower(), "target": t.strip().lower(), "type": r.strip()}
                      for h, r, t in triples]}


def read_expla_graphs(path: Path) -> list[GraphQuestion]:
    """ExplaGraphs rows: the question asks for the stance of argument 2 towards argument 1."""
    out = []
    with path.open(encoding="utf-8", newline="") as f:
        for i, row in enumerate(csv.DictReader(f, delimiter="\t")):
            triples = [(h, r, t) for h, r, t in _TRIPLE.findall(row.get("graph") or "")]
            if not triples or row.get("label") not in ("support", "counter"):
                raise BadInputError(f"{path}:{i + 2}: expected a support/counter label and (h; r; t) triples")
            question = (f"Argument 1: {row['arg1'].strip()}\nArgument 2: {row['arg2'].strip()}\n"
                        "Does argument 2 support or counter argument 1?")
            out.append(GraphQuestion(f"eg{i}", question, row["label"], triples_record(f"eg{i}", triples)))
    return out


def read_jsonl_questions(path: Path) -> list[GraphQuestion]:
    """Generic graph-QA lines: a graph document with ``question`` and ``answer``."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            q, a, rid = str(rec["question"]), str(rec["answer"]), str(rec["id"])
        except (ValueError, KeyError, TypeError) as exc:
            raise BadInputError(f"{path}:{n}: a graph-QA line needs id, question, answer, nodes, edges "
                                f"({exc})") from exc
        graph = {k: rec[k] for k in ("id", "nodes", "edges", "title") if k in rec}
        out.append(GraphQuestion(rid, q, a, graph, [str(g) for g in rec.get("gold_nodes", [])]))
    return out


def read_graphqa(dataset: Path) -> list[GraphQuestion]:
    """The questions of ``dataset``: an ExplaGraphs folder or TSV, or a graph-QA JSONL file."""
    if dataset.is_dir():
        tsv = dataset / "train_dev.tsv"
        if tsv.is_file():
            return read_expla_graphs(tsv)
        raise NotFoundError(f"{dataset} has no train_dev.tsv (ExplaGraphs); or name a graph-QA .jsonl file")
    if not dataset.is_file():
        raise NotFoundError(f"no such dataset: {dataset}")
    if dataset.suffix.lower() == ".tsv":
        return read_expla_graphs(dataset)
    return read_jsonl_questions(dataset)
