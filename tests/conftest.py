"""Shared fixtures: a dashboard app on a fresh games folder, and a test client for its API; the
tournament hub's store in each database it can use (SQLite, and a real PostgreSQL server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask

from tests.postgres_server import PostgresServer, PostgresUnavailable
from tests.web_testing import ApiClient, make_app


@pytest.fixture
def app(tmp_path: Path) -> Flask:
    """The dashboard with the test PIN, cheap PIN hashing and a games folder of its own."""
    return make_app(tmp_path / "games")


@pytest.fixture
def api(app: Flask) -> ApiClient:
    """A browser on :func:`app` (no admin session until it unlocks)."""
    return ApiClient(app)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session (``initdb`` into a temporary folder, a Unix socket
    there); skipped, saying exactly why, only where PostgreSQL or psycopg is not installed."""
    try:
        server = PostgresServer()
    except PostgresUnavailable as why:
        pytest.skip(str(why))
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a hub's store lives, once per database: a SQLite file, or a fresh PostgreSQL
    database's URL (what ``hub --store`` takes). The same tests run against both."""
    if request.param == "sqlite":
        yield str(tmp_path / "hub.sqlite")
        return
    server: PostgresServer = request.getfixturevalue("postgres")
    url = server.create_database()
    yield url
    server.drop_database(url)
