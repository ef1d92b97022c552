"""The explorer page: one HTML page with its stylesheet and script, served beside the HTTP API.

:func:`explorer_router` serves the page at ``GET /`` and its two assets under
``/explorer/``, read once from ``graphrag_orm/server/static``; nothing else is served
(any other asset name is a 404 ``not-found`` problem) and nothing is fetched from anywhere else (no CDN, no build step). The page learns
where the API is from a ``<meta name="graphrag-api">`` tag holding the application's
root path and the prefix, escaped; its question box holds at most the server's question
bound (``maxlength``, filled in when the page is served). Every response carries a Content-Security-Policy that
allows only this origin's script, style and requests and no inline script, so a document
text that slipped past the page's ``textContent`` rule still could not run. The page reads
no document text of its own: it shows what the API returns.
"""

from __future__ import annotations

import html
import re
from functools import cache
from importlib import resources
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.server.problems import PROBLEM_MEDIA_TYPE, ProblemCode, problem

__all__ = ["ASSETS_PATH", "SECURITY_HEADERS", "explorer_router"]

ASSETS_PATH: Final = "/explorer"
"""Where the page's stylesheet and script are served (``/explorer/explorer.css``, ``/explorer/explorer.js``)."""

SECURITY_HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
"""Sent with the page and its assets: this origin only, no inline script, no framing."""

_ASSETS: Final = {
    "explorer.css": "text/css; charset=utf-8",
    "explorer.js": "text/javascript; charset=utf-8",
}
# A prefix is a path of plain segments ("/graphrag", "/api/v1"), or empty for the root.
_PREFIX: Final = re.compile(r"(?:/[A-Za-z0-9._~-]+)*")


@cache
def _static(name: str) -> str:
    return resources.files("graphrag_orm.server").joinpath("static", name).read_text(encoding="utf-8")


def explorer_router(prefix: str, max_question_chars: int) -> APIRouter:
    """A router serving the explorer page at ``GET /`` for the API mounted at ``prefix``.

    ``max_question_chars`` is the API's question bound (the retrieval options'
    ``max_question_chars``): the question box takes no more.

    ``prefix`` is the API's path (``/graphrag``; ``""`` or ``"/"`` for the root); the
    page asks ``{root_path}{prefix}/ask`` and lists ``{root_path}{prefix}/documents``.
    A prefix with anything but plain path segments is ``ConfigurationError("invalid-option")``.
    The page and assets are read when the router is built, so a missing file fails here.
    """
    prefix = "" if prefix == "/" else prefix
    if _PREFIX.fullmatch(prefix) is None:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION,
            "the explorer's API prefix must be a path such as /graphrag (letters, digits, ._~-)",
        )
    page = _static("index.html").replace("{{max_question}}", str(int(max_question_chars)))
    assets = {name: (_static(name), media_type) for name, media_type in _ASSETS.items()}
    router = APIRouter()

    @router.get("/", include_in_schema=False)
    async def explorer_page(request: Request) -> HTMLResponse:
        root = str(request.scope.get("root_path") or "").rstrip("/")
        filled = page.replace("{{api}}", html.escape(root + prefix, quote=True)).replace(
            "{{assets}}", html.escape(root + ASSETS_PATH, quote=True)
        )
        return HTMLResponse(filled, headers=SECURITY_HEADERS)

    @router.get(ASSETS_PATH + "/{name}", include_in_schema=False)
    async def explorer_asset(name: str) -> Response:
        asset = assets.get(name)
        if asset is None:
            missing = problem(ProblemCode.NOT_FOUND, "nothing is served at this path", status=404)
            return Response(
                missing.to_json(),
                status_code=404,
                media_type=PROBLEM_MEDIA_TYPE,
                headers={**SECURITY_HEADERS, "Cache-Control": "no-store"},
            )
        text, media_type = asset
        return Response(text, media_type=media_type, headers=SECURITY_HEADERS)

    return router
