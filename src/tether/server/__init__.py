"""The HTTP server (needs the ``server`` extra): the API, API keys, health and metrics."""

from tether.server.app import create_app
from tether.server.auth import principal_for_key

__all__ = ["create_app", "principal_for_key"]
