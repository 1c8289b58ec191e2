# The viewfinder code env server: Python on virtual displays, served over the OpenEnv
# wire protocol.
#
#   docker build -t viewfinder-server .
#   docker run --rm --init -p 127.0.0.1:8000:8000 -e VIEWFINDER_SERVER_TOKEN=$(openssl rand -hex 16) viewfinder-server
#
# The server listens on 0.0.0.0 inside the container, so it refuses to start without
# VIEWFINDER_SERVER_TOKEN; every request and WebSocket must carry that token. It runs
# as root on purpose: root is what lets each session's worker switch to a user id of its
# own (so RLIMIT_NPROC bounds a fork loop, and sessions cannot signal each other or the
# server). CodingEnv.from_docker_image() does all of this for you.
FROM python:3.11-slim-bookworm

# Xvfb for the displays, fonts and Tk for the code's windows, ffmpeg for the videos of
# start_recording(), bubblewrap to confine each session's worker (namespaces), tini to
# reap orphans. Ray's node probes on Kubernetes are `ray health-check` commands (the
# manifest in docs/scale.md): the minimal Ray has no dashboard agent to answer HTTP.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        xvfb xauth fonts-dejavu-core fonts-liberation libtk8.6 ffmpeg bubblewrap tini \
    && rm -rf /var/lib/apt/lists/*

RUN pip install --no-cache-dir uv

WORKDIR /app
COPY . /app
# Every member plus the code env's gui extra (matplotlib, pygame); no dev tools.
RUN uv sync --frozen --no-dev --all-packages --all-extras

ENV PATH="/app/.venv/bin:$PATH" \
    PYTHONUNBUFFERED=1

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
    CMD python -c "import os, httpx; r = httpx.get('http://127.0.0.1:8000/health', headers={'Authorization': 'Bearer ' + os.environ['VIEWFINDER_SERVER_TOKEN']}); raise SystemExit(0 if r.is_success else 1)"

ENTRYPOINT ["tini", "--"]
CMD ["viewfinder", "serve", "--host", "0.0.0.0", "--port", "8000"]
