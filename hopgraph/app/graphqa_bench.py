"""The graph-QA benchmark (``hopgraph bench-graphqa``): questions answered from graph documents.

For each question: (a) the LLM with the document's whole text, (b) with the verbalized PCST subgraph
of the document's own graph, (c) with the triples the GNN attended to most (token budget); (d) the
GNN alone (graph + question -> answer, binary answers) beside a majority-class and a question-only
baseline of the same run. Retrieval-side figures need no LLM: the document's rank under dense
retrieval, PCST subgraph size, connectedness, budget and BFS-fallback rate, and, where the data
names gold nodes, hit rate and attention precision.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from hopgraph.app.graphqa_data import GraphQuestion
from hopgraph.app.platform import Platform
from hopgraph.core.records import document_id
from hopgraph.core.settings import Settings
from hopgraph.gpu.device import resolve
from hopgraph.gpu.graph_classifier import ClassifierConfig, GraphExample, edge_attention, predict, train_classifier
from hopgraph.ingest.llm_client import ChatClient
from hopgraph.retrieval.parts import doc_graph

_WORDS = re.compile(r"\w+")


def chat_client(settings: Settings) -> ChatClient | None:
    """The client of the configured LLM (its answers cached under ``llm.cache_dir``), or None without one."""
    llm = settings.llm
    return ChatClient(llm, llm.cache_dir or settings.data_dir / "llm-cache") if llm.configured else None


@dataclass(frozen=True)
class BenchConfig:
    node_budget: int = 50
    triple_budget: int = 500          # tokens of GNN-ranked triples
    test_share: float = 0.2
    llm_questions: int = 200          # test questions sent to the LLM (each costs 3 requests)
    seed: int = 0
    classifier: ClassifierConfig = field(default_factory=ClassifierConfig)


@dataclass
class BenchReport:
    questions: int = 0
    train: int = 0
    test: int = 0
    retrieval: dict[str, Any] = field(default_factory=dict)
    accuracy: dict[str, float | str] = field(default_factory=dict)
    llm: dict[str, dict[str, float] | str] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def json(self) -> str:
        return json.dumps(self.__dict__, indent=2)


def token_f1(pred: str, gold: str) -> float:
    p, g = _WORDS.findall(pred.lower()), _WORDS.findall(gold.lower())
    common = sum((Counter(p) & Counter(g)).values())
    if not common:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def exact(pred: str, gold: str) -> bool:
    return " ".join(_WORDS.findall(pred.lower())) == " ".join(_WORDS.findall(gold.lower()))


def write_documents(questions: list[GraphQuestion], folder: Path) -> Path:
    """The questions' graphs as one graph-document JSONL (rewritten only when it changed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "graphs.jsonl"
    body = "".join(json.dumps(q.record, sort_keys=True) + "\n" for q in questions)
    if not path.is_file() or path.read_text(encoding="utf-8") != body:
        path.write_text(body, encoding="utf-8")
    return path


class GraphQaBench:
    """Runs the benchmark on a platform whose stores hold only the benchmark's documents."""

    def __init__(self, platform: Platform, cfg: BenchConfig, chat: ChatClient | None) -> None:
        self.p = platform
        self.cfg = cfg
        self.chat = chat

    def run(self, questions: list[GraphQuestion], folder: Path, progress: bool = False) -> BenchReport:
        path = write_documents(questions, folder)
        self.p.ingest([path], progress=progress)
        report = BenchReport(questions=len(questions))
        embed = self.p.embedder.embed
        qvecs = embed([q.question for q in questions])
        graphs, subs, ranks = [], [], []
        for q, qv in tqdm(list(zip(questions, qvecs, strict=True)), desc="subgraphs", disable=not progress):
            doc = document_id(f"{path.resolve()}#{q.record['id']}")
            g = doc_graph.DocGraph.of(doc, *self.p.browser.document_graph(doc), embed)
            graphs.append(g)
            subs.append(doc_graph.retrieve(g, qv, budget=self.cfg.node_budget))
            found = self.p.query(q.question, mode="dense", top_k=10)
            docs = [r.citation.document_id for r in found.results]
            ranks.append(docs.index(doc) + 1 if doc in docs else None)
        report.retrieval = self._retrieval_figures(questions, graphs, subs, ranks)
        self._answers(questions, graphs, subs, qvecs, report, progress)
        return report

    def _retrieval_figures(self, questions: list[GraphQuestion], graphs: list[doc_graph.DocGraph],
                           subs: list[doc_graph.DocSubgraph], ranks: list[int | None]) -> dict[str, Any]:
        n = max(len(subs), 1)
        out: dict[str, Any] = {
            "document_hit@1": round(sum(r == 1 for r in ranks) / n, 4),
            "document_hit@5": round(sum(r is not None and r <= 5 for r in ranks) / n, 4),
            "pcst_fallback_rate": round(sum(s.fallback for s in subs) / n, 4),
            "connected": round(sum(s.connected(g) for s, g in zip(subs, graphs, strict=True)) / n, 4),
            "within_budget": round(sum(len(s.nodes) <= self.cfg.node_budget for s in subs) / n, 4),
            "mean_nodes": round(float(np.mean([len(s.nodes) for s in subs])) if subs else 0.0, 2),
            "mean_graph_nodes": round(float(np.mean([len(g.labels) for g in graphs])) if graphs else 0.0, 2),
            "p50_ms": round(float(np.median([s.seconds * 1000 for s in subs])) if subs else 0.0, 3),
        }
        gold = [(q, s, g) for q, s, g in zip(questions, subs, graphs, strict=True) if q.gold_nodes]
        if gold:
            out["gold_hit_rate"] = round(sum(set(q.gold_nodes) <= {g.labels[i].lower() for i in s.nodes}
                                             for q, s, g in gold) / len(gold), 4)
        else:
            out["gold_hit_rate"] = "n/a (the data names no gold nodes)"
        return out

    def _answers(self, questions: list[GraphQuestion], graphs: list[doc_graph.DocGraph],
                 subs: list[doc_graph.DocSubgraph], qvecs: np.ndarray, report: BenchReport, progress: bool) -> None:
        order = list(range(len(questions)))
        random.Random(self.cfg.seed).shuffle(order)
        cut = len(order) - max(1, int(len(order) * self.cfg.test_share))
        train, test = order[:cut], order[cut:]
        report.train, report.test = len(train), len(test)
        answers = sorted({q.answer for q in questions})
        majority = Counter(questions[i].answer for i in train).most_common(1)[0][0]
        gold = np.array([questions[i].answer for i in test])
        report.accuracy["majority_class"] = round(float(np.mean(gold == majority)), 4)
        attention: dict[int, np.ndarray] = {}
        if len(answers) == 2:
            from sklearn.linear_model import LogisticRegression

            y = np.array([int(q.answer == answers[1]) for q in questions])
            clf = LogisticRegression(max_iter=2000).fit(qvecs[train], y[train])
            report.accuracy["question_only"] = round(float(np.mean(clf.predict(qvecs[test]) == y[test])), 4)
            types = sorted({t for g in graphs for _, t, _ in g.edges})
            tvec = dict(zip(types, self.p.embedder.embed(types), strict=True)) if types else {}
            onehot = {t: np.eye(len(types), dtype=np.float32)[k] for k, t in enumerate(types)}
            examples = [self._example(g, qv, int(yy), tvec, onehot)
                        for g, qv, yy in zip(graphs, qvecs, y, strict=True)]
            device = resolve(self.p.settings.gpu.device)  # gpu.device: auto = cuda when torch sees one
            held = max(1, len(train) // 10)  # the last tenth of the training split picks the epoch
            model = train_classifier([examples[i] for i in train[:-held]], self.cfg.classifier, device,
                                     val=[examples[i] for i in train[-held:]])
            probs = predict(model, [examples[i] for i in test], device)
            report.accuracy["gnn"] = round(float(np.mean((probs >= 0.5).astype(int) == y[test])), 4)
            attention = {i: edge_attention(model, examples[i], device) for i in test[: self.cfg.llm_questions]}
        else:
            for key in ("question_only", "gnn"):
                report.accuracy[key] = f"n/a ({len(answers)} distinct answers; the GNN head is binary)"
        report.retrieval["attention_precision@5"] = _attention_precision(questions, graphs, attention)
        report.llm = self._llm(questions, graphs, subs, attention, test[: self.cfg.llm_questions], answers, progress)
        for i in test[:3]:
            report.examples.append({"question": questions[i].question, "answer": questions[i].answer,
                                    "pcst": subs[i].verbalize(graphs[i]),
                                    "gnn_triples": self._ranked(graphs[i], attention.get(i))})

    @staticmethod
    def _example(g: doc_graph.DocGraph, qv: np.ndarray, label: int, tvec: dict[str, np.ndarray],
                 onehot: dict[str, np.ndarray]) -> GraphExample:
        """Node label vectors; edge features = the relation type's vector and its one-hot."""
        width = g.x.shape[1] + len(onehot)
        ei = np.array([[s for s, _, _ in g.edges], [d for _, _, d in g.edges]], dtype=np.int64).reshape(2, -1)
        attr = (np.stack([np.concatenate([tvec[t], onehot[t]]) for _, t, _ in g.edges]) if g.edges
                else np.zeros((0, width), np.float32))
        return GraphExample(g.x, ei, attr, qv, label)

    def _ranked(self, g: doc_graph.DocGraph, att: np.ndarray | None) -> str:
        """The triples the GNN attended to most, best first, under ``triple_budget`` tokens."""
        if att is None or not len(att):
            return ""
        return "\n".join(g.triples(np.argsort(-att, kind="stable").tolist(), self.cfg.triple_budget))

    def _llm(self, questions: list[GraphQuestion], graphs: list[doc_graph.DocGraph],
             subs: list[doc_graph.DocSubgraph], attention: dict[int, np.ndarray], asked: list[int],
             answers: list[str], progress: bool) -> dict[str, dict[str, float] | str]:
        columns = ("llm_raw_text", "llm_pcst_subgraph", "llm_gnn_triples")
        if self.chat is None:
            return dict.fromkeys(columns, "no endpoint")
        scores: dict[str, list[tuple[bool, float]]] = {c: [] for c in columns}
        for i in tqdm(asked, desc="llm", disable=not progress):
            q, g = questions[i], graphs[i]
            contexts = {"llm_raw_text": "\n".join(g.triples(range(len(g.edges)))),
                        "llm_pcst_subgraph": subs[i].verbalize(g),
                        "llm_gnn_triples": self._ranked(g, attention.get(i)) if attention else "n/a"}
            for col, ctx in contexts.items():
                said = self.chat.chat(_prompt(q.question, ctx, answers), max_tokens=16).strip()
                scores[col].append((exact(said, q.answer), token_f1(said, q.answer)))
        return {c: {"exact_match": round(float(np.mean([e for e, _ in v])), 4),
                    "token_f1": round(float(np.mean([f for _, f in v])), 4), "questions": len(v)}
                for c, v in scores.items()}


def _attention_precision(questions: list[GraphQuestion], graphs: list[doc_graph.DocGraph],
                         attention: dict[int, np.ndarray]) -> float | str:
    """Of the 5 edges the GNN attended to most, the share touching a gold node (questions with gold)."""
    hits, total = 0, 0
    for i, att in attention.items():
        gold = {g.lower() for g in questions[i].gold_nodes}
        if not gold or not len(att):
            continue
        g = graphs[i]
        for e in np.argsort(-att, kind="stable")[:5]:
            s, _, d = g.edges[int(e)]
            hits += int(g.labels[s].lower() in gold or g.labels[d].lower() in gold)
            total += 1
    return round(hits / total, 4) if total else "n/a (the data names no gold nodes)"


def _prompt(question: str, context: str, answers: list[str]) -> list[dict[str, str]]:
    choices = " or ".join(answers) if len(answers) <= 10 else "a few words"
    return [{"role": "system", "content": f"Answer from the graph given. Reply with one answer only: {choices}."},
            {"role": "user", "content": f"# Graph\n{context or '(empty)'}\n\n# Question\n{question}\n\n# Reply\n"}]
