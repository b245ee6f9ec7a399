"""Summarizers and token counters without a database; the chat adapter against a local
HTTP server this test starts."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tether.config import load_settings
from tether.errors import ConfigError, SummarizerFailed
from tether.threads.models import Turn, TurnKind, TurnRole
from tether.threads.summarize import (
    ChatCompletionsSummarizer,
    ExtractiveSummarizer,
    load_summarizer,
)
from tether.threads.tokens import ApproximateCounter

KEY = "sk-test-very-secret-1234"


def turn(seq: int, content: str, kind: TurnKind = TurnKind.MESSAGE) -> Turn:
    return Turn(
        tenant_id="acme",
        thread_id="t-1",
        seq=seq,
        turn_id=f"turn-{seq}",
        role=TurnRole.USER if kind is TurnKind.MESSAGE else TurnRole.TOOL,
        kind=kind,
        content=content,
        tokens=0,
        ref=None,
        metadata={},
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
        created_by="agent",
    )


class Endpoint:
    """A local chat-completions server: records requests, answers as configured."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.reply: Any = {"choices": [{"message": {"content": "The user wants a refund."}}]}
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                endpoint.requests.append(
                    {
                        "path": self.path,
                        "auth": self.headers.get("Authorization"),
                        "body": json.loads(body),
                    }
                )
                data = json.dumps(endpoint.reply).encode()
                self.send_response(endpoint.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    try:
        yield server
    finally:
        server.close()


def test_the_chat_adapter_posts_the_turns_and_returns_the_summary(endpoint: Endpoint) -> None:
    summarizer = load_summarizer(
        load_settings(
            summarizer_url=endpoint.url, summarizer_key=KEY, summarizer_model="small-model"
        ),
        ApproximateCounter(),
    )

    text = summarizer.summarize(
        [
            turn(1, "I want my money back."),
            turn(2, "order 17 status: returned", TurnKind.OBSERVATION),
        ],
        previous="The user bought a bike.",
        max_tokens=50,
    )

    assert text == "The user wants a refund."
    assert summarizer.id == "chat:small-model"
    [request] = endpoint.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["auth"] == f"Bearer {KEY}"
    body = request["body"]
    assert body["model"] == "small-model" and body["max_tokens"] == 50
    prompt = body["messages"][1]["content"]
    assert "The user bought a bike." in prompt and "I want my money back." in prompt


def test_an_error_answer_names_the_status_and_never_the_key(endpoint: Endpoint) -> None:
    endpoint.status = 401
    endpoint.reply = {"error": f"invalid key {KEY}"}
    summarizer = ChatCompletionsSummarizer(endpoint.url, key=KEY, model="m")

    with pytest.raises(SummarizerFailed) as raised:
        summarizer.summarize([turn(1, "hello")], previous=None, max_tokens=20)

    assert "401" in str(raised.value)
    assert KEY not in str(raised.value) and KEY not in repr(raised.value.__context__)


def test_an_answer_without_a_summary_is_refused(endpoint: Endpoint) -> None:
    endpoint.reply = {"choices": []}
    summarizer = ChatCompletionsSummarizer(endpoint.url, key=KEY, model="m")

    with pytest.raises(SummarizerFailed, match="without choices"):
        summarizer.summarize([turn(1, "hello")], previous=None, max_tokens=20)


def test_an_unreachable_endpoint_is_a_clear_error(endpoint: Endpoint) -> None:
    url = endpoint.url
    endpoint.close()
    summarizer = ChatCompletionsSummarizer(url, key=KEY, model="m", timeout_s=2)

    with pytest.raises(SummarizerFailed, match="cannot reach") as raised:
        summarizer.summarize([turn(1, "hello")], previous=None, max_tokens=20)
    assert KEY not in str(raised.value)


def test_a_malformed_url_is_refused() -> None:
    with pytest.raises(ConfigError):
        ChatCompletionsSummarizer("ftp://example.org", key=KEY, model="m")


def test_the_extractive_default_is_offline_deterministic_and_within_its_budget() -> None:
    counter = ApproximateCounter()
    summarizer = load_summarizer(load_settings(), counter)
    turns = [
        turn(1, "The claimant reported a stolen bicycle. The weather was nice."),
        turn(2, "The bicycle was a red frame. Police report 4471 was filed for the bicycle."),
        turn(3, "Output line one. " * 50, TurnKind.OBSERVATION),
    ]

    first = summarizer.summarize(turns, previous=None, max_tokens=30)
    second = summarizer.summarize(turns, previous=None, max_tokens=30)

    assert isinstance(summarizer, ExtractiveSummarizer)
    assert first == second
    assert "bicycle" in first
    assert counter.count(first) <= 30
    assert first.count("Output line one") <= 1


def test_the_approximate_counter_says_it_is_approximate() -> None:
    counter = ApproximateCounter()

    assert counter.approximate
    assert counter.count("Hello, world!") == 4
    assert counter.count_many(["a b", "c"]) == [2, 1]
