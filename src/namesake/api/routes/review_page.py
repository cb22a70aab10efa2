"""The review workspace page (/review): three files shipped inside the package, nothing from another host."""

from __future__ import annotations

import json
from importlib import resources

from fastapi import APIRouter
from fastapi.responses import Response

from namesake.api.deps import ServicesDep
from namesake.core import NotFoundError
from namesake.domain import ENTITY_TYPES, SuggestionStatus
from namesake.review import AGAINST, MEASURED, REASONS, SOURCES, TYPE_WORDS

router = APIRouter(tags=["review page"], include_in_schema=False)
# the page's modules (each under 400 lines), its style sheet and icon: only these names are served
MODULES = tuple(
    f"{name}.js"
    for name in ("review", "core", "queue", "transcript", "detail", "decide", "select", "memory", "download", "history",
                 "matches")
)  # fmt: skip
ASSETS = {**dict.fromkeys(MODULES, "text/javascript"), "review.css": "text/css", "favicon.svg": "image/svg+xml"}
# The page may load only its own files and talk only to this API: no CDN, no other host.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _read(name: str) -> bytes:
    return resources.files("namesake.api").joinpath("static", name).read_bytes()


@router.get("/review")
def page() -> Response:
    """The page; it signs in with an API key and calls the API of this same server."""
    return Response(_read("review.html"), media_type="text/html; charset=utf-8", headers=HEADERS)


@router.get("/review/assets/names.js")
def names(services: ServicesDep) -> Response:
    """The names and limits the page shares with the server, written from the server's own: never copied by hand."""
    shared = {
        "STATUS": {s.name: s.value for s in SuggestionStatus},
        "REASONS": REASONS,  # signal → what it says, in the order the page lists them
        "AGAINST": AGAINST,
        "MEASURED": list(MEASURED),  # the reasons shown with their figure
        "SOURCES": SOURCES,
        "TYPES": list(ENTITY_TYPES),
        "TYPE_WORDS": TYPE_WORDS,  # each type in a reviewer's words
        "FOLD_BELOW": services.runtime.settings.review_fold_below,
    }
    lines = [f"export const {name} = Object.freeze({json.dumps(value)});" for name, value in shared.items()]
    body = "// Written by the server (SuggestionStatus, review.explain, settings).\n" + "\n".join(lines) + "\n"
    return Response(body, media_type="text/javascript; charset=utf-8", headers=HEADERS)


@router.get("/review/assets/{name}")
def asset(name: str) -> Response:
    """The page's script, style sheet and icon (only these names are served)."""
    if name not in ASSETS:
        raise NotFoundError(f"no asset {name!r}", field="name")
    return Response(_read(name), media_type=f"{ASSETS[name]}; charset=utf-8", headers=HEADERS)
