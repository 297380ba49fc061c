"""The API's documentation pages, Swagger UI at ``/docs`` and ReDoc at ``/redoc``, whose JavaScript,
CSS and icon the app serves itself (``/docs-assets``) from the ``fastapi-offline`` package: they
render on a machine without internet, where FastAPI's default pages (loaded from a CDN) are blank."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = Path(str(files("fastapi_offline") / "static"))
PREFIX = "/docs-assets"


def install(app: FastAPI) -> None:
    """Serve /docs, /redoc and their assets (create the app with ``docs_url=None, redoc_url=None``)."""
    app.mount(PREFIX, StaticFiles(directory=ASSETS), name="docs-assets")
    openapi = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=openapi, title=f"{app.title} API",
                                   swagger_js_url=f"{PREFIX}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{PREFIX}/swagger-ui.css",
                                   swagger_favicon_url=f"{PREFIX}/favicon.png")

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url=openapi, title=f"{app.title} API",
                              redoc_js_url=f"{PREFIX}/redoc.standalone.js",
                              redoc_favicon_url=f"{PREFIX}/favicon.png", with_google_fonts=False)
