"""``create_app(settings)``: the viewer's FastAPI application.

The lifespan owns what the routes share, on ``app.state``: the catalog of artifacts
under PATH, the thumbnails, the displays the live view may show, the live feeds and
the input connections of ``--control``. Stopping the app stops every feed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from PIL import Image

from viewfinder.core import imaging
from viewfinder.core.web_access import guard
from viewfinder.viewer.artifacts.catalog import Catalog
from viewfinder.viewer.auth import viewer_access
from viewfinder.viewer.displays import LiveDisplays
from viewfinder.viewer.errors import ViewerError
from viewfinder.viewer.frames import Thumbnails
from viewfinder.viewer.live import LiveFeeds
from viewfinder.viewer.routes import artifacts, live
from viewfinder.viewer.settings import ViewerSettings

STATIC = Path(str(files("viewfinder.viewer") / "static"))


def screen_source(settings: ViewerSettings) -> tuple[Image.Image, str]:
    """The screen cache files are checked on: the display captured now, or the file."""
    given = settings.screen
    assert given is not None
    if given.startswith(":"):
        from viewfinder.core import get_backend

        with get_backend("xvfb", display=given) as backend:
            shot = backend.capture(context={"purpose": "viewer-cache-check"})
        return shot.to_pil(), f"display {given} (captured now)"
    try:
        with Image.open(given) as image:
            imaging.check_pixels(image.width, image.height)  # from the header, before decoding
            image.load()
            return image.convert("RGB"), given
    except (OSError, imaging.ImageTooLargeError) as exc:
        raise ViewerError(f"the screen {given} cannot be read as an image: {exc}") from exc


def create_app(settings: ViewerSettings) -> FastAPI:
    """The viewer for ``settings``, behind :class:`~viewfinder.core.web_access.WebGuard`
    (Host, Origin, framing, the token)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = app.state
        state.settings = settings
        state.catalog = (
            Catalog(settings.root, (lambda: screen_source(settings)) if settings.screen else None)
            if settings.root is not None
            else None
        )
        state.thumbnails = Thumbnails()
        state.displays = LiveDisplays(settings.live)
        state.feeds = LiveFeeds(
            fmt=settings.live_format, quality=settings.live_quality, max_fps=settings.live_fps
        )
        state.inputs = live.Inputs()
        try:
            yield
        finally:
            await state.feeds.close()
            state.inputs.close()
            state.thumbnails.close()

    app = FastAPI(
        title="viewfinder view",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.include_router(artifacts.router)
    app.include_router(live.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    return guard(app, viewer_access(settings))
