"""A client of the HTTP API that calls as one of a few named principals, each by its key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi.testclient import TestClient


@dataclass
class Keyed:
    client: TestClient
    keys: dict[str, str]
    """Principal id -> its API key."""

    def call(self, method: str, who: str, path: str, body: Any = None, **params: Any) -> Any:
        """``method`` on ``/api/v1<path>`` as ``who``: the response."""
        headers = {"Authorization": f"Bearer {self.keys[who]}"}
        return self.client.request(
            method, f"/api/v1{path}", headers=headers, json=body, params=params
        )

    def ok(self, method: str, who: str, path: str, body: Any = None, **params: Any) -> Any:
        """The JSON of a successful call (``None`` when it has no body)."""
        response = self.call(method, who, path, body, **params)
        assert response.status_code < 300, response.text
        return response.json() if response.content else None
