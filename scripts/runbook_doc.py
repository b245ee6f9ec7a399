"""Generate docs/runbook.md: a real CLI session through each situation an operator meets.

python -m scripts.runbook_doc          # rewrite docs/runbook.md (from the repository root)
python -m scripts.runbook_doc --check  # exit 1 if docs/runbook.md is out of date (a test runs this)

It creates a SQLite database in a temporary folder, runs the example workflows of
``examples/runbook`` into each situation, and runs the ``tether`` commands an operator
would, in this process, capturing what they print. Every command opens the database with
the same fake clock and numbered ids (the only thing changed from a plain ``tether``), and
the master key is fixed, so ids, times and note digests come out the same on every run.
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from examples.runbook import workflow as examples
from typer.testing import CliRunner

from tether import FakeClock, Tether
from tether.cli import _common as common
from tether.cli.main import app as cli_app
from tether.config import load_settings
from tether.keys import create_key_file

DOC = Path(__file__).resolve().parents[1] / "docs" / "runbook.md"
START = datetime(2030, 3, 1, 2, 50, tzinfo=UTC)
KEY = bytes(range(32))
TENANT = "acme"
REGISTRY = "examples.runbook.workflow:registry"
FIXED = "examples.runbook.workflow:fixed"
COLUMNS = "110"


class NumberedIds:
    """Ids ``00000000-0000-7000-8000-000000000001``, ``…002``, …: readable and stable."""

    def __init__(self) -> None:
        self.count = 0

    def new_id(self) -> uuid.UUID:
        self.count += 1
        return uuid.UUID(f"00000000-0000-7000-8000-{self.count:012d}")


class Crash(BaseException):
    """A worker process dying (nothing in the engine catches it)."""


@dataclass
class Session:
    folder: Path
    clock: FakeClock = field(default_factory=lambda: FakeClock(START))
    ids: NumberedIds = field(default_factory=NumberedIds)
    parts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        key_file = self.folder / "tether.key"
        create_key_file(key_file, KEY)
        self.env = {
            "TETHER_URL": f"sqlite:///{self.folder / 'runbook.db'}",
            "TETHER_KEY_FILE": str(key_file),
            "TETHER_WORKFLOWS": REGISTRY,
            "TETHER_EMBEDDER": "none",
            "COLUMNS": COLUMNS,
        }
        self.settings = load_settings(
            url=self.env["TETHER_URL"], key_file=key_file, embedder="none"
        )
        Tether.migrate(self.settings)[0].close()
        self.app = Tether.open(self.settings, clock=self.clock, ids=self.ids)
        self.app.tenants.create(TENANT, admin="alice")
        admin = self.app.tenants.principal(TENANT, "alice")
        for who, role in (("olga", "operator"), ("bot", "agent"), ("sam", "approver")):
            self.app.tenants.grant(admin, who, [role])
        self.bot = self.app.tenants.principal(TENANT, "bot")

    # -- the document ----------------------------------------------------------------------

    def say(self, text: str) -> None:
        self.parts.append(text.strip() + "\n")

    def tether(self, *args: str, actor: str | None = "olga") -> str:
        """Run ``tether ARGS`` (as ``actor`` in the tenant), show it and what it printed."""
        words = list(args) + (["-t", TENANT, "--as", actor] if actor else [])
        with _pinned(self.clock, self.ids), _signals_kept(), _console_width(int(COLUMNS)):
            result = CliRunner().invoke(cli_app, words, env=self.env)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        lines = [line for line in result.output.splitlines() if not line.startswith("database:")]
        shown = "$ tether " + " ".join(shlex.quote(word) for word in words)
        self.parts.append("```console\n" + "\n".join([shown, *lines]).rstrip() + "\n```\n")
        return result.stdout

    def text(self) -> str:
        return "\n".join(self.parts)

    # -- the world -------------------------------------------------------------------------

    def start(self, workflow: str, state: dict[str, Any], version: int | None = None) -> str:
        chosen = (examples.fixed if version else examples.registry).get(workflow, version)
        return self.app.runs.start(self.bot, chosen, state).run_id

    def crash(self, run_id: str, point: str, owner: str = "worker-1") -> None:
        """A worker claims the run and dies at ``point`` (a persistence boundary)."""

        def die(at: str, key: str) -> None:
            if at == point:
                raise Crash(f"{at} {key}")

        executor = self.app.executor(examples.registry, owner=owner, faults=die)
        with contextlib.suppress(Crash):
            executor.execute(TENANT, run_id)

    def later(self, delta: timedelta) -> None:
        self.clock.advance(delta)


@contextlib.contextmanager
def _pinned(clock: FakeClock, ids: NumberedIds) -> Iterator[None]:
    """Every ``Tether.open`` in the block uses ``clock`` and ``ids``."""
    original: Callable[..., Tether] = Tether.open

    def open_pinned(settings: Any = None, **options: Any) -> Tether:
        options.update(clock=clock, ids=ids)
        return original(settings, **options)

    Tether.open = staticmethod(open_pinned)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        Tether.open = original  # type: ignore[method-assign]


@contextlib.contextmanager
def _console_width(width: int) -> Iterator[None]:
    """The CLI's consoles print ``width`` columns in the block, whatever the terminal or a
    ``COLUMNS`` seen when they were made: the page must not depend on where it is built."""
    consoles = (common.console, common.err_console)
    kept = [console._width for console in consoles]
    for console in consoles:
        console.width = width
    try:
        yield
    finally:
        for console, width_before in zip(consoles, kept, strict=True):
            console._width = width_before


@contextlib.contextmanager
def _signals_kept() -> Iterator[None]:
    """``tether worker`` installs SIGTERM/SIGINT handlers: put this process's back."""
    kept = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for number, handler in kept.items():
            signal.signal(number, handler)


SITUATIONS = "\n".join(
    "| " + " | ".join(row) + " |"
    for row in [
        ("situation", "first look", "then"),
        ("---", "---", "---"),
        (
            "a stuck run",
            "`tether runs stuck`, `tether runs inspect RUN`",
            "start a worker; `pause` / `resume` to hold it meanwhile",
        ),
        (
            "a failed run",
            "`tether runs inspect RUN`",
            "`retry` (same code), `retry --to-version N` (the fix), `complete` by hand",
        ),
        (
            "an effect whose outcome is unknown",
            "`tether runs inspect RUN` (the key, the review)",
            "ask the service, then `tether runs answer REVIEW`",
        ),
        (
            "an approval that expired",
            "`tether runs stuck`, `tether runs inspect RUN`",
            "`retry-node` asks again",
        ),
        (
            "a run to redo from an earlier point",
            "`tether runs checkpoints RUN`",
            "`fork --checkpoint K [--patch …]`",
        ),
    ]
)

INTRO = f"""
# The runbook: a run that needs a person

What an operator does at 3 a.m., as commands. Each section below is a real session with
`tether`, generated by `scripts/runbook_doc.py` against the example workflows of
`examples/runbook/workflow.py` (a payout: `check` → `pay` → `notify`; a refund that needs
an approval), and checked by a test, so it shows what the commands print today. Ids are
numbered and the clock is fixed so the session reads the same every time.

Every action (`pause`, `resume`, `cancel`, `retry`, `retry-node`, `skip`, `complete`,
`fork`) needs the operator role and `--reason`. The reason (and `--comment`) is stored as
an erasable operator note; the run's event and the audit entry cite it by digest
(`note:…`), never as text (`docs/operations.md`, "Reasons and notes"). Reading
(`stuck`, `inspect`, `checkpoints`, `show`, `timeline`) is open to any role that reads runs.
The same actions are endpoints of the HTTP API (`POST /api/v1/runs/{{run_id}}/retry`, …,
with `{{"reason": …}}`; `docs/http.md`). An action on a run that a worker claims or
steps at that moment is done again from a fresh read (up to five times) rather than
refused; it is recorded once.

{SITUATIONS}

The session runs with:

```console
$ export TETHER_URL=sqlite:///runbook.db TETHER_WORKFLOWS={REGISTRY}
```

in a tenant `acme` where `olga` is an operator, `bot` the agent that starts runs and
`sam` an approver.
"""


def stuck_run(s: Session) -> None:
    s.say("""
## A stuck run

The worker running a payout died in the middle of its first node (the process was killed;
nothing was written after its claim). Its lease ran out a while ago and no worker has
claimed the run since.
""")
    run = s.start("payout", {"payee": "de-0001", "amount": 120})
    s.crash(run, "before_checkpoint")
    s.later(timedelta(minutes=10))
    s.tether("runs", "stuck")
    s.say("""
`inspect` shows where it stopped: still `running` at node `check` (visit 1), no effect
under way, and the commands that fit. Pause it before looking further: the request is
kept, and whichever worker claims the run next parks it `paused` instead of running it.
""")
    s.tether("runs", "inspect", run, "--events", "3")
    s.tether("runs", "pause", run, "--reason", "worker host died; checking the payee first")
    s.tether("worker", "--until-idle", "--owner", "worker-2", actor=None)
    s.say("""
The new worker took the run over (the `run.claimed` event says `taken_over`) and parked
it. Once the payee checks out, resume it; the next worker runs it to the end.
""")
    s.tether("runs", "timeline", run)
    s.tether("runs", "resume", run, "--reason", "payee verified with the bank")
    s.tether("worker", "--until-idle", "--owner", "worker-2", actor=None)
    s.say(
        "A run that should not go on at all is cancelled instead (`tether runs cancel RUN "
        "--reason …`); the `run.cancelled` event and webhook carry the reason's digest."
    )


def failed_run(s: Session) -> None:
    s.say("""
## A failed run

A payout to France fails in `pay`, on both attempts its retry policy allows: version 1
looks the fee up by country and knows only Germany. The transfer itself had gone through
before the error.
""")
    run = s.start("payout", {"payee": "fr-0042", "amount": 80}, version=1)
    executor = s.app.executor(examples.registry, owner="worker-1")
    executor.execute(TENANT, run)
    s.later(timedelta(seconds=30))
    executor.execute(TENANT, run)
    s.later(timedelta(minutes=1))
    s.tether("runs", "stuck")
    s.tether("runs", "inspect", run, "--events", "4")
    s.say("""
`retry` would run `pay` again as the same visit on the same code: the transfer replays
from the journal, and the fee lookup fails again. The fix ships as version 2 of the
workflow (`examples.runbook.workflow:fixed`): its state gains a `currency`, filled in by
the upgrade function from state version 1. `--to-version 2` moves the run onto it; the
node must exist in version 2 and the stored state must pass the upgrade, or nothing
changes.
""")
    s.tether("runs", "retry", run, "--to-version", "3", "--workflows", FIXED, "--reason", "fee fix")
    s.tether(
        "runs", "retry", run, "--to-version", "2", "--workflows", FIXED,
        "--reason", "fee lookup fixed in payout@2",
    )  # fmt: skip
    s.tether("worker", "--until-idle", "--owner", "worker-3", "--workflows", FIXED, actor=None)
    s.tether("runs", "show", run)
    transfer = next(k for k in examples.BANK.calls if k.endswith(f"{run}:pay:1:1:transfer"))
    s.say(f"""
The bank was sent the transfer once: `{transfer}` ({examples.BANK.calls[transfer]} call).

When the node's work was done by other means (the transfer made at the bank counter),
`complete` records it by hand instead: `--output` holds the state fields the node would
have set, checked against the workflow's state model, and `--next` the node to go on at
(without `--next` the whole run is completed). `skip --next NODE` moves on without any
output.
""")
    second = s.start("payout", {"payee": "fr-0043", "amount": 15}, version=1)
    executor.execute(TENANT, second)
    s.later(timedelta(seconds=30))
    executor.execute(TENANT, second)
    s.tether(
        "runs", "complete", second, "--output", '{"fee": 0}', "--next", "notify",
        "--reason", "fee waived by finance",
    )  # fmt: skip
    s.tether("worker", "--until-idle", "--owner", "worker-3", actor=None)


def unknown_effect(s: Session) -> None:
    s.say("""
## An effect whose outcome is unknown

This worker died between sending a transfer and recording its result. The journal holds
the transfer's intent and no result: whether the bank did it, only the bank knows, and a
worker that is only paused could still send it. `inspect` shows it as `interrupted`. The
transfer is not retry-safe, so the worker that takes the run over does not send it again;
it parks the run for a person (`human_review`). It would do the same had the run come back
another way (resumed after a pause, or retried after it failed): the open intent is what
counts.
""")
    run = s.start("payout", {"payee": "de-0007", "amount": 300})
    s.crash(run, "after_effect")
    s.later(timedelta(minutes=2))
    s.app.executor(examples.registry, owner="worker-2").execute(TENANT, run)
    s.tether("runs", "inspect", run, "--events", "4")
    key = next(k for k in examples.BANK.calls if k.endswith(f"{run}:pay:1:1:transfer"))
    done = examples.BANK.applied[key]
    s.say(f"""
Ask the bank about the idempotency key: it has `{key}` as `{done["transfer"]}`. So the
transfer happened; answer the review with its result, and the run goes on without sending
it again. (Had the bank never seen the key, `--answer '{{"retry": true}}'` sends it, under
the same key.)
""")
    review = s.app.runs.get(s.bot, run).wait_id or ""
    s.tether("runs", "answer", review, "--answer", canonical_json({"result": done}))
    s.tether("worker", "--until-idle", "--owner", "worker-2", actor=None)
    s.say(f"The bank saw that key {examples.BANK.calls[key]} time.")


def expired_approval(s: Session) -> None:
    s.say("""
## An approval that expired

A refund waits for a supervisor's approval, which expires after an hour. Nobody decided,
and no worker was running to expire it.
""")
    run = s.start("refund", {"order": "A-1001", "amount": 40})
    s.app.executor(examples.registry, owner="worker-1").execute(TENANT, run)
    s.later(timedelta(hours=1, minutes=10))
    s.tether("runs", "stuck")
    s.say("""
An expired approval can no longer be decided. A worker expires it, and the node takes its
rejection path, which here fails the run. `retry` would replay the expired decision from
the journal; `retry-node` runs the node as a new visit, which asks again (the abandoned
visit journaled no effect, so nothing runs twice).
""")
    s.tether("worker", "--until-idle", "--owner", "worker-2", actor=None)
    s.tether("runs", "inspect", run, "--events", "3")
    s.tether("runs", "retry-node", run, "--reason", "supervisor back from leave")
    s.tether("worker", "--until-idle", "--owner", "worker-2", actor=None)
    approval = s.app.runs.get(s.bot, run).wait_id or ""
    s.tether("approvals", "approve", approval, actor="sam")
    s.tether("worker", "--until-idle", "--owner", "worker-2", actor=None)


def redo(s: Session) -> None:
    s.say("""
## A run to redo from an earlier point

A payout completed with the wrong amount (120 instead of 210). A fork starts a new run
from one of its checkpoints, with a patch of the state, and leaves the original as it is.
The fork has its own run id, so every effect it makes has a new idempotency key: effects
the original made after that checkpoint happen again. `fork` lists them and does nothing
without `--rerun-effects`.
""")
    run = s.start("payout", {"payee": "de-0009", "amount": 120})
    s.app.executor(examples.registry, owner="worker-1").execute(TENANT, run)
    s.tether("runs", "checkpoints", run)
    s.tether(
        "runs", "fork", run, "--checkpoint", "1", "--patch", '{"amount": 210}',
        "--reason", "amount was mistyped",
    )  # fmt: skip
    s.say("""
Here the second transfer and receipt are wanted (the first transfer is refunded
separately), so:
""")
    s.tether(
        "runs", "fork", run, "--checkpoint", "1", "--patch", '{"amount": 210}',
        "--reason", "amount was mistyped", "--rerun-effects",
    )  # fmt: skip
    s.tether("worker", "--until-idle", "--owner", "worker-2", actor=None)
    fork = s.app.runs.all(s.bot, limit=1)[0]
    sent = sorted(count for key, count in examples.BANK.calls.items() if fork.run_id in key)
    s.say(f"""
The fork ({fork.status.value}, amount {s.app.runs.state(s.bot, fork.run_id)["amount"]})
sent the bank {len(sent)} calls, one per new key. The original run is
untouched: same status, checkpoints and journal.
""")
    s.tether("runs", "show", run)


def canonical_json(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def render() -> str:
    """The whole of docs/runbook.md, generated afresh."""
    examples.BANK.calls.clear()
    examples.BANK.applied.clear()
    with tempfile.TemporaryDirectory() as folder:
        session = Session(Path(folder))
        try:
            session.say(INTRO)
            for situation in (stuck_run, failed_run, unknown_effect, expired_approval, redo):
                situation(session)
        finally:
            session.app.close()
        return session.text()


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if DOC.read_text(encoding="utf-8") != text:
            print("docs/runbook.md is out of date: run python -m scripts.runbook_doc")
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
