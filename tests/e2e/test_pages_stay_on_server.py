"""No page the server sends asks for anything from another host.

Every page of the console (each GET route, with each object of the seeded database it can
show, each status tab, each filter) and the API reference at ``/docs`` is fetched; every
URL it names in ``src``, ``href``, ``action``, ``formaction`` or an htmx attribute, and
every ``url(...)`` of the stylesheets it links, must be a path of this server. A console
route this test does not visit fails it, so a new page is checked as soon as it exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import Mount

from tests.e2e.console_support import SERVED, Seeded, seed
from tether import Tether
from tether.config import load_settings
from tether.runs.models import RunStatus, WaitStatus
from tether.server import create_app

HOST = "testserver"
LINKS = re.compile(
    r"""\b(?:src|href|action|formaction|hx-get|hx-post|hx-put|hx-delete|srcset|poster|data)"""
    r"""\s*=\s*(?:"([^"]*)"|'([^']*)')""",
    re.IGNORECASE,
)
CSS_URLS = re.compile(r"""url\(\s*["']?([^"')]+)""")
ABSOLUTE = re.compile(r"""(?:https?:)?//[^\s"'<>]+""")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory, test_key_file: Path) -> Seeded:
    return seed(tmp_path_factory.mktemp("pages"), test_key_file)


@pytest.fixture(scope="module")
def api(seeded: Seeded) -> Iterator[FastAPI]:
    settings = load_settings(url=seeded.url, key_file=seeded.key_file, embedder="none")
    with Tether.open(settings) as app:
        yield create_app(app, workflows=SERVED)


def console_routes(api: FastAPI) -> set[str]:
    """Every GET route of the console, as ``/console/…`` paths with their parameters."""
    found = set()
    for mount in api.routes:
        if isinstance(mount, Mount) and mount.path == "/console":
            for route in mount.routes:
                if isinstance(route, APIRoute) and "GET" in route.methods:
                    found.add("/console" + route.path)
    return found


def pages(seeded: Seeded) -> list[tuple[str, str]]:
    """(route, URL) of every page to fetch, for each object it can show."""
    runs = [*seeded.claims.values(), seeded.hostile_run, *seeded.stuck_runs]
    memories = [*seeded.memories.values(), seeded.held_memory]
    listed = [
        ("/console/", "/console/"),
        ("/console/runs", "/console/runs"),
        *[("/console/runs", f"/console/runs?status={status.value}") for status in RunStatus],
        *[("/console/runs/{run_id}", f"/console/runs/{run_id}") for run_id in runs],
        *[("/console/runs/{run_id}/handoff.md", f"/console/runs/{r}/handoff.md") for r in runs],
        ("/console/stuck", "/console/stuck"),
        *[("/console/approvals", f"/console/approvals?status={s.value}") for s in WaitStatus],
        ("/console/memory", "/console/memory"),
        ("/console/memory", "/console/memory?q=email&scopes=user:u-1"),
        ("/console/memory/pending", "/console/memory/pending"),
        *[("/console/memory/{memory_id}", f"/console/memory/{m}") for m in memories],
        ("/console/audit", "/console/audit"),
        *[("/console/audit", f"/console/audit?run={run_id}") for run_id in runs],
        *[("/console/audit", f"/console/audit?memory={m}") for m in memories],
        ("/console/audit", "/console/audit?principal=alice"),
    ]
    return listed


def off_server(text: str, base: str) -> list[str]:
    """The URLs ``text`` names that lead off the server at ``base``."""
    found = [a or b for a, b in LINKS.findall(text)] + CSS_URLS.findall(text)
    wrong = []
    for link in found:
        target = urlsplit(link.strip())
        if link.strip().startswith("//") or (target.netloc and target.netloc != HOST):
            wrong.append(link)
        elif target.scheme not in ("", "http", "https"):
            wrong.append(link)  # javascript:, data:, …
    return wrong


def assert_on_server(client: TestClient, url: str, answer: object) -> None:
    text = getattr(answer, "text", "")
    assert off_server(text, client.base_url.host) == [], url
    for stylesheet in re.findall(r'<link rel="stylesheet" href="([^"]+)"', text):
        css = client.get(stylesheet)
        assert css.status_code == 200, stylesheet
        assert off_server(css.text, HOST) == [] and not ABSOLUTE.search(css.text), stylesheet


def log_in(client: TestClient, key: str) -> None:
    page = client.get("/console/login")
    assert_on_server(client, "/console/login", page)
    token = re.search(r'name="csrf" value="([0-9a-f]{64})"', page.text)
    assert token is not None
    done = client.post("/console/login", data={"csrf": token.group(1), "api_key": key})
    assert done.status_code in (200, 303), done.text


def test_every_console_page_names_only_this_server(api: FastAPI, seeded: Seeded) -> None:
    visited = {"/console/login"}
    with TestClient(api) as client:
        log_in(client, seeded.keys["alice"])
        for route, url in pages(seeded):
            answer = client.get(url)
            assert answer.status_code == 200, f"{url}: {answer.status_code}"
            assert_on_server(client, url, answer)
            visited.add(route)
    with TestClient(api) as root:
        log_in(root, seeded.keys["root"])
        for url in ("/console/runs", "/console/runs?tenant=acme"):
            assert_on_server(root, url, root.get(url))

    assert console_routes(api) - visited == set(), "console pages this test does not fetch"


def test_the_api_reference_is_served_here_and_loads_nothing_from_elsewhere(
    api: FastAPI,
) -> None:
    with TestClient(api) as client:
        reference = client.get("/docs")
        redoc = client.get("/redoc")
        document = client.get("/openapi.json").json()

    assert reference.status_code == 200
    assert redoc.url.path == "/docs" and redoc.text == reference.text
    assert_on_server(client, "/docs", reference)
    assert "<script" not in reference.text
    assert reference.headers["content-security-policy"].startswith("default-src 'self'")
    for path, item in document["paths"].items():
        for method, operation in item.items():
            anchor = f'id="{operation["operationId"]}"'
            assert anchor in reference.text, f"{method.upper()} {path} is not on /docs"
            assert path in reference.text
    for name in document["components"]["schemas"]:
        assert f'id="schema-{name}"' in reference.text, f"schema {name} is not on /docs"
