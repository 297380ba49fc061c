"""``hopgraph ask``: an LLM's answer from a retrieval mode's cited context, with checked citations."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from hopgraph.cli.common import console, fail, load_settings, reported
from hopgraph.core.errors import ConflictError
from hopgraph.core.limits import QUERY_TEXT_MAX, TOP_K_MAX, check_query_text
from hopgraph.core.records import Answer
from hopgraph.retrieval.registry import REGISTRY

if TYPE_CHECKING:
    from hopgraph.app.answers import AnswerEvent


def ask(
    question: Annotated[str, typer.Argument(help=f"The question (at most {QUERY_TEXT_MAX:,} characters, "
                                                 "as over HTTP).")],
    mode: Annotated[str | None, typer.Option(help=f"Retrieval mode of the context (default: answer.mode); "
                                                  f"one of: {REGISTRY.help()}.")] = None,
    top_k: Annotated[int | None, typer.Option(min=1, max=TOP_K_MAX, help="Passages retrieved "
                                                                        "(default: answer.top_k).")] = None,
    stream: Annotated[bool, typer.Option(help="Print the answer as the LLM writes it.")] = True,
    show_context: Annotated[bool, typer.Option("--context", help="Also print the context sent to the LLM.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer, citations and retrieval as JSON.")] = False,
) -> None:
    """Answer QUESTION with the OpenAI-compatible LLM of the llm settings (llm.base_url, llm.model,
    llm.api_key; never on the command line) from the cited context of a retrieval mode. Every sentence
    should cite passages as \\[document#chunk]; citations naming nothing in the context are flagged.
    Exit code 5 when no LLM is configured."""
    with reported():
        check_query_text(question)
        if mode is not None:
            REGISTRY.check(mode)
    s = load_settings()
    from hopgraph.app.answers import NO_LLM
    from hopgraph.app.ownership import embedded_owner

    if not s.llm.configured:
        raise fail(ConflictError(NO_LLM))
    server = embedded_owner(s)
    if server is not None:  # `hopgraph serve` owns the stores: ask it
        from hopgraph.cli import remote

        with reported():
            result = remote.answer(server.url, question, mode, top_k)
    else:
        from hopgraph.app.platform import Platform

        with reported(), Platform(s) as p:
            if stream and not as_json:
                result = _streamed(p.answerer.stream(question, mode=mode, top_k=top_k))
            else:
                result = p.answerer.answer(question, mode=mode, top_k=top_k)
    if as_json:
        console.print_json(result.model_dump_json())
        return
    if not (stream and server is None):
        console.print(escape(result.answer), highlight=False)
    _print_checks(result, show_context)


def _streamed(events: Iterator[AnswerEvent]) -> Answer:
    """Print the deltas as they come; return the checked answer."""
    final: Answer | None = None
    for event in events:
        if event.kind == "delta":
            console.out(event.text, end="", highlight=False)
        elif event.kind == "answer":
            final = event.answer
    console.out("")
    if final is None:
        raise RuntimeError("the answer stream ended without its answer")
    return final


def _print_checks(result: Answer, show_context: bool) -> None:
    console.print(f"[dim](mode {result.mode}, {result.model}, {result.timings_ms.get('total', 0):.0f} ms)[/]")
    for n, c in enumerate(result.citations, 1):
        console.print(f"  [cyan]{n}.[/] [dim]{escape(f'[{Path(c.source).name} · {c.document_id} · {c.chunk_id}]')}[/]")
    if not result.citations:
        console.print("  [yellow]the answer cites no passage of the context[/]")
    for label in result.invalid_citations:
        console.print(f"  [red]cites something not in the context:[/] {escape(label)}")
    for sentence in result.uncited_sentences:
        console.print(f"  [yellow]uncited:[/] {escape(sentence)}")
    if show_context:
        console.rule("context")
        console.print(escape(result.retrieval.context), highlight=False)
