"""The JSON the page renders, and the pictures and videos it loads.

Every name a request carries (an artifact, a step, a video) is looked up in what the
viewer read from its PATH; a file is served only when it resolved inside it, and then
from one open of it under PATH (:func:`~viewfinder.viewer.confine.open_confined`), never
by its path again. Reading runs in a worker thread, so a large artifact never holds the
event loop.
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from viewfinder.viewer.artifacts.catalog import Catalog
from viewfinder.viewer.artifacts.model import LoadedArtifact
from viewfinder.viewer.errors import RefusedPathError, UnknownArtifactError
from viewfinder.viewer.frames import PictureError, Thumbnails, check_source, media_type, open_frame
from viewfinder.viewer.opened import OpenedFileResponse

router = APIRouter(prefix="/api")

ArtifactId = Annotated[str, Query(alias="id", max_length=4096)]


def _refusal(exc: Exception) -> JSONResponse:
    status = 403 if isinstance(exc, RefusedPathError) else 404
    return JSONResponse({"detail": str(exc)}, status_code=status)


def _catalog(request: Request) -> Catalog | None:
    catalog: Catalog | None = request.app.state.catalog
    return catalog


@router.get("/info")
async def info(request: Request) -> dict[str, Any]:
    """What the viewer shows: PATH's kind (or its list), the live displays, --control."""
    state = request.app.state
    catalog = _catalog(request)
    top = await asyncio.to_thread(catalog.top) if catalog is not None else None
    return {
        "root": str(catalog.root) if catalog is not None else None,
        "top": top,
        "live": await asyncio.to_thread(state.displays.available),
        "control": state.settings.control,
    }


@router.get("/artifact")
async def artifact(request: Request, artifact_id: ArtifactId = ".") -> Response:
    """One artifact as the page renders it (:class:`ArtifactView` JSON)."""
    catalog = _catalog(request)
    if catalog is None:
        return JSONResponse({"detail": "this viewer shows only live displays"}, status_code=404)
    try:
        loaded: LoadedArtifact = await asyncio.to_thread(catalog.load, artifact_id)
    except (RefusedPathError, UnknownArtifactError) as exc:
        return _refusal(exc)
    body = await asyncio.to_thread(loaded.view.model_dump_json)
    return Response(body, media_type="application/json")


@router.get("/frame")
async def frame(
    request: Request,
    step: Annotated[int, Query(ge=-1)],
    artifact_id: ArtifactId = ".",
    which: Annotated[str, Query(pattern="^(frame|after|recorded|live)$")] = "frame",
    size: Annotated[str, Query(pattern="^(full|thumb)$")] = "full",
) -> Response:
    """A step's picture: its frame, the frame after it, or a cache step's regions."""
    catalog = _catalog(request)
    if catalog is None:
        return JSONResponse({"detail": "no artifacts here"}, status_code=404)
    thumbs: Thumbnails = request.app.state.thumbnails
    try:
        loaded = await asyncio.to_thread(catalog.kept, artifact_id)
        source = check_source(loaded.frames.get((step, which)))
        # a cache file's pictures of the screen are taken again at each look
        headers = _fresh if loaded.view.kind == "cache" else _cached
        key = (loaded.view.id, step, which, id(source) if headers is _fresh else 0)
        if isinstance(source, bytes):
            if size == "thumb":
                return _jpeg(await thumbs.of(source, key), headers)
            return Response(source, media_type=media_type(source), headers=headers)
        # the file is opened once, under PATH, and that open file is what is sent
        fd = await asyncio.to_thread(open_frame, catalog.confined.root, source)
        if size == "thumb":
            try:
                return _jpeg(await thumbs.of(fd, key), headers)
            finally:
                os.close(fd)
        return OpenedFileResponse(fd, media_type=media_type(os.pread(fd, 16, 0)), headers=headers)
    except (RefusedPathError, UnknownArtifactError) as exc:
        return _refusal(exc)
    except PictureError as exc:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)


def _jpeg(data: bytes, headers: dict[str, str]) -> Response:
    return Response(data, media_type="image/jpeg", headers=headers)


@router.get("/video")
async def video(
    request: Request, index: Annotated[int, Query(ge=0)], artifact_id: ArtifactId = "."
) -> Response:
    """One of an artifact's videos (range requests work: the page seeks in it)."""
    catalog = _catalog(request)
    if catalog is None:
        return JSONResponse({"detail": "no artifacts here"}, status_code=404)
    try:
        loaded = await asyncio.to_thread(catalog.kept, artifact_id)
    except (RefusedPathError, UnknownArtifactError) as exc:
        return _refusal(exc)
    if index >= len(loaded.videos):
        return JSONResponse({"detail": f"no video {index}"}, status_code=404)
    try:
        fd = await asyncio.to_thread(open_frame, catalog.confined.root, loaded.videos[index])
    except PictureError as exc:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)
    return OpenedFileResponse(fd, media_type="video/mp4")


#: Frames never change under their URL while the artifact's files do not; a short
#: cache still lets a page re-read a recording that grows.
_cached = {"Cache-Control": "private, max-age=60"}
_fresh = {"Cache-Control": "no-store"}
