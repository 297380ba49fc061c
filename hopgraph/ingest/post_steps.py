"""What an ingest does once its batches are written: named steps, run in order, each timed under its
name in the report's ``stage_seconds`` (the name is how a step is added, skipped or timed).

- ``resolve``: merge the entities no run has resolved yet (a killed run's too) into their canonical ones;
- ``forget``: drop what removed texts alone supported, fill sections and captions written before them;
- ``chat_dates``: resolve the turn dates of conversations stored before the dating rules changed again
  (marked by a migration; ``ingest.conversations.redate``);
- ``access_tags``: write the access groups of documents stored before vectors carried them into their
  vectors (marked by a migration; ``ingest.access_tags``);
- ``types``: re-vote the type of every entity whose mentions changed;
- ``communities``: update the communities around what changed (when they are stale);
- ``tree``: keep the RAPTOR tree current (once built, or when ``raptor.enabled``);
- ``vector_write``: optimize the vector store after new documents, then flush it.

``run_post_steps`` is given the ingestor (``Host``, every role the steps use); each step is typed with what
it uses of it, the one graph role (``graphdb.protocols``) included: ``Resolving``, ``Forgetting``, ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from hopgraph.core.records import IngestReport
from hopgraph.core.settings import Settings
from hopgraph.graphdb.protocols import ChatDateStore, CommunityStore, EntityEditor, SectionStore, VectorGroupStore
from hopgraph.ingest.access_tags import tag_stored
from hopgraph.ingest.batches import stage
from hopgraph.ingest.community_plan import CommunityReport
from hopgraph.ingest.conversations import redate
from hopgraph.ingest.embedding import backfill_captions, backfill_sections, retype_points
from hopgraph.ingest.entity_types import voted_types
from hopgraph.ingest.extraction import Extractor
from hopgraph.ingest.forgetting import forget_removed_text
from hopgraph.ingest.graph_roles import StepGraph
from hopgraph.ingest.raptor import TreeBuilder
from hopgraph.ingest.resolution import EntityResolver, public_aliases
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.store import VectorStore


class Host(Protocol):
    """What the steps use of ``ingest.pipeline.Ingestor``, which runs them: its stores, models and
    settings, the aliases of this run, and its community update."""

    @property
    def graph(self) -> StepGraph: ...

    vectors: VectorStore
    embedder: Embedder
    extractor: Extractor
    settings: Settings
    resolver: EntityResolver
    aliases: dict[str, str]
    tree: TreeBuilder

    def forget_embedded(self, collection: str, ids: Sequence[str]) -> None: ...

    def update_communities(self, rebuild: bool = False) -> CommunityReport: ...


class Configured(Protocol):
    """What ``resolve``'s condition uses: the settings."""

    settings: Settings


class _WithVectors(Protocol):
    """What ``vector_write`` uses: the vector store."""

    vectors: VectorStore


class Resolving(Protocol):
    """What ``resolve`` uses: entity merges."""

    @property
    def graph(self) -> EntityEditor: ...

    resolver: EntityResolver
    aliases: dict[str, str]

    def forget_embedded(self, collection: str, ids: Sequence[str]) -> None: ...


class ForgettingGraph(EntityEditor, SectionStore, Protocol):
    """Stale descriptions rewritten, sections and captions backfilled."""


class Forgetting(_WithVectors, Protocol):
    """What ``forget`` uses."""

    @property
    def graph(self) -> ForgettingGraph: ...

    embedder: Embedder
    extractor: Extractor
    settings: Settings


class Redating(Protocol):
    """What ``chat_dates`` uses: the turn dates of stored conversations."""

    @property
    def graph(self) -> ChatDateStore: ...


class Tagging(_WithVectors, Protocol):
    """What ``access_tags`` uses: the access groups to write into stored vectors."""

    @property
    def graph(self) -> VectorGroupStore: ...


class Typing(_WithVectors, Protocol):
    """What ``types`` uses: the entity type votes."""

    @property
    def graph(self) -> EntityEditor: ...


class CommunityCheck(Protocol):
    """What ``communities``' condition uses: whether the communities are stale."""

    @property
    def graph(self) -> CommunityStore: ...

    settings: Settings


class Clustering(Protocol):
    """What ``communities`` uses: the ingestor's community update."""

    def update_communities(self, rebuild: bool = False) -> CommunityReport: ...


class TreeKeeping(_WithVectors, Protocol):
    """What ``tree`` and its condition use: the RAPTOR tree builder, the summaries' count."""

    tree: TreeBuilder
    settings: Settings


@dataclass(frozen=True)
class PostStep:
    """A step after the writes: its name, what it does, and whether it runs in this ingest."""

    name: str
    run: Callable[[Host, IngestReport], None]
    when: Callable[[Host], bool] = lambda ing: True


def resolve(ing: Resolving, report: IngestReport) -> None:
    pending = ing.graph.unresolved_entities()  # durable: a killed run's entities too
    if pending:
        merges = ing.resolver.find(pending)
        ing.resolver.apply(merges)
        ing.aliases.update(public_aliases(merges))  # a group's merge is made again inside the group
        ing.forget_embedded("entities", [m.alias_id for m in merges])
        report.entities_merged += len(merges)
        ing.graph.mark_resolved([e.id for e in pending])


def forget(ing: Forgetting, report: IngestReport) -> None:
    forget_removed_text(ing.graph, ing.vectors, ing.embedder, ing.extractor, ing.settings.extraction)
    backfill_sections(ing.graph, ing.vectors)
    backfill_captions(ing.graph, ing.vectors, ing.embedder)


def chat_dates(ing: Redating, report: IngestReport) -> None:
    report.redated_chunks += redate(ing.graph)[1]


def access_tags(ing: Tagging, report: IngestReport) -> None:
    tag_stored(ing.graph, ing.vectors)


def vote_types(ing: Typing, report: IngestReport) -> None:
    voted = ing.graph.untyped_entities()
    retyped = voted_types(ing.graph.label_votes(voted))
    if retyped:  # payloads first, then the types with their change-log entry in one transaction
        retype_points(ing.graph, ing.vectors, retyped)
        ing.graph.commit(entities=list(retyped), types=retyped)
    ing.graph.mark_typed(voted)


def communities(ing: Clustering, report: IngestReport) -> None:
    report.communities = ing.update_communities().communities


def tree(ing: TreeKeeping, report: IngestReport) -> None:
    ing.tree.update()
    report.summaries = ing.vectors.count("summaries")


def flush_vectors(ing: _WithVectors, report: IngestReport) -> None:
    if report.documents_ingested:
        ing.vectors.optimize()
    ing.vectors.flush()


def _resolving(ing: Configured) -> bool:
    return ing.settings.resolution.enabled


def _communities_stale(ing: CommunityCheck) -> bool:
    return ing.settings.communities.enabled and ing.graph.communities_stale()


def _has_tree(ing: TreeKeeping) -> bool:
    return ing.settings.raptor.enabled or bool(ing.vectors.count("summaries"))  # once built, kept current


POST_STEPS: tuple[PostStep, ...] = (
    PostStep("resolve", resolve, _resolving),
    PostStep("forget", forget),
    PostStep("chat_dates", chat_dates),
    PostStep("access_tags", access_tags),  # after ``forget``, whose backfills write vectors of older documents
    PostStep("types", vote_types),  # an entity's type is the vote of its mentions
    PostStep("communities", communities, _communities_stale),
    PostStep("tree", tree, _has_tree),
    PostStep("vector_write", flush_vectors),
)


def run_post_steps(ing: Host, report: IngestReport, steps: Sequence[PostStep] = POST_STEPS,
                   skip: Sequence[str] = ()) -> None:
    """Run ``steps`` in order (those named in ``skip`` and those whose ``when`` is false are left out)."""
    for step in steps:
        if step.name not in skip and step.when(ing):
            with stage(report, step.name):
                step.run(ing, report)
