"""Shared fixtures: a dashboard app on a fresh games folder, and a test client for its API."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask

from tests.web_testing import ApiClient, make_app


@pytest.fixture
def app(tmp_path: Path) -> Flask:
    """The dashboard with the test PIN, cheap PIN hashing and a games folder of its own."""
    return make_app(tmp_path / "games")


@pytest.fixture
def api(app: Flask) -> ApiClient:
    """A browser on :func:`app` (no admin session until it unlocks)."""
    return ApiClient(app)
