"""The explorer at ``/ui``: a page to query, see the subgraph that produced a ranking, and browse
entities, communities and jobs. Server-rendered HTML and a small script that calls the API with the
user's key (kept in the tab's session storage, never in a URL); the graph drawing is vis-network,
served from the ``pyvis`` package that bundles it (no CDN: the page works offline)."""

from __future__ import annotations

import html
from importlib.util import find_spec
from pathlib import Path
from string import Template

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from hopgraph.retrieval.registry import REGISTRY

ASSETS = Path(__file__).with_name("explorer_assets")


def _vis_dir() -> Path:
    """vis-network's folder in the pyvis package, found without importing pyvis (whose import would
    delay the server's start by a tenth of a second)."""
    spec = find_spec("pyvis")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the explorer needs the package pyvis (it bundles vis-network)")
    return Path(next(iter(spec.submodule_search_locations))) / "lib" / "vis-9.1.2"


VIS = _vis_dir()
#: the page may load from its own server only (vis-network sets inline styles and draws data: images)
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")


def page(modes: list[str], keys_required: bool) -> str:
    """The explorer's HTML (modes in the selector, whether the API asks for a key)."""
    options = "\n".join(f'<option value="{html.escape(m)}"{" selected" if m == "graph" else ""}>{html.escape(m)}'
                        "</option>" for m in modes)
    return Template((ASSETS / "index.html").read_text(encoding="utf-8")).substitute(
        modes=options, auth="required" if keys_required else "open")


def install(app: FastAPI) -> None:
    """Serve ``/ui`` and its assets."""
    app.mount("/ui/assets", StaticFiles(directory=ASSETS), name="explorer-assets")
    app.mount("/ui/vendor", StaticFiles(directory=VIS), name="explorer-vendor")

    @app.get("/ui", include_in_schema=False)
    async def explorer(request: Request) -> HTMLResponse:
        hg = request.app.state.hg
        return HTMLResponse(page(list(REGISTRY.names), not hg.auth.open), headers={
            "Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "Content-Security-Policy": CSP})
