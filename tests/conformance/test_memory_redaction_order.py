"""Redaction comes first: the embedder (which may be a remote service), the logs and the
decision log never receive a secret the policy refuses or a personal value it redacts."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pytest

from tests.memory_support import DenseTestEmbedder, create_tenant
from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.memory.models import MemoryKind, MemoryProposal, Scope, SourceType, Verdict

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SECRETS = [
    ("the passphrase for the vault is fq57bpowlyhsiy", "fq57bpowlyhsiy"),
    ("pw is walrus857", "walrus857"),
    ("deploy with ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", "aB3dE6gH9jK2mN5pQ8sT1vW4"),
    ("api secret " + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
     "9f86d081884c7d659a2feaa0c55ad015"),
    ("Recovery codes: 4f8k2-9xm3p 7q2wd-kk81z", "4f8k2-9xm3p"),
]  # fmt: skip
PERSONAL = [
    ("Write to jan.devries@example.nl about the roof", "jan.devries@example.nl"),
    ("The claimant lives at 221B Baker Street in London", "221B Baker Street"),
    ("The claimant was born on 12 March 1985 in Leeds", "12 March 1985"),
    ("Call her on +44 20 7946 0958 after five", "7946 0958"),
    ("The claimant was diagnosed with diabetes in 2019", "diabetes"),
    ("Passport number C01X00T47 is on file", "C01X00T47"),
]


class RecordingEmbedder(DenseTestEmbedder):
    """Remembers every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.seen += list(texts)
        return super().embed(texts)


@pytest.fixture
def recorded(backend: TestDatabase) -> Iterator[tuple[Tether, RecordingEmbedder]]:
    embedder = RecordingEmbedder()
    app = Tether.open(backend.settings(), clock=FakeClock(), embedder=embedder)
    try:
        yield app, embedder
    finally:
        app.close()


def test_the_embedder_logs_and_decision_log_never_see_a_secret_or_a_personal_value(
    recorded: tuple[Tether, RecordingEmbedder],
    backend: TestDatabase,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, embedder = recorded
    cast = create_tenant(app, "acme")
    proposals = [
        MemoryProposal(
            text=text,
            kind=MemoryKind.FACT,
            scope=Scope.USER,
            scope_id="u-1",
            source_type=SourceType.HUMAN,
            confidence=0.9,
        )
        for text, _ in SECRETS + PERSONAL
    ]
    with caplog.at_level(logging.DEBUG):
        decisions = app.memory.propose_many(cast["olga"], proposals)
        written = next(d for d in decisions if d.memory_id)
        app.memory.correct(
            cast["olga"], str(written.memory_id), "Her new e-mail is a.b@example.org"
        )
    verdicts = [decision.verdict for decision in decisions]
    assert verdicts[: len(SECRETS)] == [Verdict.REFUSED] * len(SECRETS)
    assert verdicts[len(SECRETS) :] == [Verdict.ALLOWED] * len(PERSONAL)
    assert embedder.seen, "the allowed memories were embedded"
    values = [value for _, value in SECRETS + PERSONAL] + ["a.b@example.org"]
    with backend.raw() as raw:
        decision_rows = [repr(row) for row in raw.execute("SELECT * FROM memory_decisions")]
        memory_rows = [repr(row) for row in raw.execute("SELECT * FROM memories")]
    assert len(decision_rows) == len(proposals) + 1
    for value in values:
        assert not [text for text in embedder.seen if value in text], value
        assert value not in caplog.text, value
        assert not [row for row in decision_rows if value in row], value
        assert not [row for row in memory_rows if value in row], value
    assert any("[ADDRESS]" in text for text in embedder.seen)
