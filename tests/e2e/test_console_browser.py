"""The operator console in a real browser: Debian's chromium, headless, driven by Playwright
against the real server (``create_app`` under uvicorn) on a seeded SQLite database.

Each test logs in with an API key through the login form and works as an operator would:
approving and rejecting from the inbox while a worker runs the runs on, correcting a
memory, cancelling a stuck run. Every page visited is checked the same way: it asked for
nothing off the server it came from (the browser's requests and the page's own links and
sources), no script of a stored string ran, and the browser logged no error (a violation
of the Content-Security-Policy is one). Screenshots of the pages go to the artifacts
directory (``TETHER_TEST_ARTIFACTS``, else the test's temporary directory).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.conftest import running_in_ci
from tests.e2e.console_support import HOSTILE, Served, seed, serve, wait_until, worker
from tether.principals import Principal
from tether.server.console.render import CSP

CHROMIUM = "/usr/bin/chromium"
"""Debian's chromium (never a browser build downloaded by Playwright)."""
LINKS = re.compile(r"""\b(?:src|href|action|hx-get|hx-post|formaction)\s*=\s*["']([^"']*)["']""")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, test_key_file: Path) -> Iterator[Served]:
    seeded = seed(tmp_path_factory.mktemp("console"), test_key_file)
    with serve(seeded) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        missing = f"{CHROMIUM} is missing: apt-get install chromium (`make test` does)"
        if running_in_ci():
            pytest.fail(f"CI=true but {missing}; the browser tests must run", pytrace=False)
        pytest.skip(missing)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("TETHER_TEST_ARTIFACTS")
    where = Path(given) / "console" if given else tmp_path_factory.mktemp("console-artifacts")
    where.mkdir(parents=True, exist_ok=True)
    return where


@dataclass
class Operator:
    """A browser session of one operator, and what the browser did."""

    page: Page
    base: str
    artifacts: Path
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def go(self, path: str) -> None:
        self.page.goto(self.base + path)
        self.check()

    def check(self) -> None:
        """This page and everything the browser fetched stayed on the server."""
        self.page.wait_for_load_state("networkidle")
        for link in LINKS.findall(self.page.content()):
            target = urlsplit(link)
            assert not target.scheme or link.startswith(self.base), f"off-server link {link}"
            assert not link.startswith("//"), f"off-server link {link}"
        host = urlsplit(self.base).netloc
        outside = [url for url in self.requests if urlsplit(url).netloc not in (host, "")]
        assert outside == [], f"requests off the server: {outside}"
        assert self.dialogs == [], f"a script ran: {self.dialogs}"
        assert self.errors == [], f"the browser logged errors: {self.errors}"

    def shot(self, name: str) -> None:
        self.page.screenshot(
            path=str(self.artifacts / f"{name}.png"), full_page=True, caret="initial"
        )

    def login(self, key: str) -> None:
        self.go("/console/login")
        self.page.fill("#api_key", key)
        self.page.click("section.login button[type=submit]")
        self.page.wait_for_url(re.compile(r"/console/runs"))
        self.check()


@pytest.fixture
def operator(
    browser: Browser, served: Served, artifacts: Path
) -> Iterator[Callable[[str], Operator]]:
    """``operator(name)``: a fresh browser context logged in with ``name``'s API key."""
    contexts = []

    def open_as(name: str) -> Operator:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        contexts.append(context)
        page = context.new_page()
        who = Operator(page, served.base, artifacts)
        page.on("request", lambda request: who.requests.append(request.url))
        page.on(
            "console",
            lambda msg: (
                who.errors.append(msg.text)
                if msg.type == "error" and not msg.text.startswith("Failed to load resource")
                else None
            ),
        )
        page.on(
            "response",
            lambda answer: (
                who.errors.append(f"{answer.status} {answer.url}")
                if answer.status >= 400 and answer.request.resource_type != "document"
                else None
            ),
        )
        page.on("pageerror", lambda exc: who.errors.append(str(exc)))
        page.on("dialog", lambda dialog: (who.dialogs.append(dialog.message), dialog.dismiss()))
        who.login(served.seeded.keys[name])
        return who

    yield open_as
    for context in contexts:
        context.close()


def _reload_until(who: Operator, selector: str, text: str) -> None:
    def shows() -> bool:
        who.page.reload()
        return text in who.page.inner_text(selector)

    wait_until(shows, f"{selector} to show {text!r}")
    who.check()


def _approval_id(served: Served, claim_id: str) -> str:
    run = served.app.runs.get(_admin(served), served.seeded.claims[claim_id])
    assert run.wait_id is not None, run
    return run.wait_id


def _admin(served: Served) -> Principal:
    return served.app.tenants.principal("acme", "alice")


def listed(page: Page, selector: str, data: str) -> list[str]:
    """The ``data-<data>`` attribute of every element ``selector`` finds, in page order."""
    found: list[str] = page.locator(selector).evaluate_all(
        f"found => found.map(element => element.dataset.{data})"
    )
    return found


def test_logging_in_shows_the_tenants_runs_and_filters_them(
    operator: Callable[[str], Operator], served: Served
) -> None:
    alice = operator("alice")
    assert alice.page.inner_text("#whoami") == "alice @ acme"
    shown = set(listed(alice.page, "table.runs tbody tr[data-run]", "run"))
    seeded = served.seeded
    assert {*seeded.claims.values(), seeded.hostile_run, *seeded.stuck_runs} <= shown
    assert seeded.globex_run not in shown
    alice.shot("runs")

    alice.page.select_option("select[name=status]", "paused")
    wait_until(
        lambda: alice.page.locator("table.runs tbody tr[data-run]").count() == 2,
        "the status filter to apply",
    )
    assert set(listed(alice.page, "table.runs tbody tr[data-run]", "run")) == set(seeded.stuck_runs)
    assert "status=paused" in alice.page.url
    alice.check()


def test_approving_from_the_inbox_completes_the_run(
    operator: Callable[[str], Operator], served: Served
) -> None:
    approval = _approval_id(served, "C-1")
    sam = operator("sam")
    sam.go("/console/approvals")
    card = sam.page.locator(f"#approval-{approval}")
    assert "Pay claim C-1" in card.inner_text()
    assert '"amount": 120' in card.locator("pre.json").inner_text()
    assert card.locator(".rationale").inner_text() == "Pay 120 EUR for claim C-1"
    assert "claim:C-1" in card.locator("ul.evidence").inner_text()
    assert "independent assessment" in card.locator("ul.alternatives").inner_text()
    assert card.locator(".on-approve").inner_text() == "the claim is paid and the run completes"
    assert "nothing is paid" in card.locator(".on-reject").inner_text()
    assert card.locator(".risk").inner_text() == "high"
    sam.shot("approvals-inbox")

    with worker(served.app):
        card.locator("textarea[name=comment]").fill("checked the invoice")
        card.locator("button[value=approve]").click()
        sam.page.wait_for_selector(f"#approval-{approval}", state="detached")
        sam.check()
        sam.go(f"/console/runs/{served.seeded.claims['C-1']}")
        _reload_until(sam, "#run-status", "completed")

    effects = sam.page.inner_text("#effects")
    assert "pay_claim" in effects and "applied" in effects
    key = sam.page.inner_text("#effects code.key")
    assert f":{served.seeded.claims['C-1']}:pay:1:" in key and key.endswith(":pay_claim"), key
    assert "approved by sam" in sam.page.inner_text("#handoff")
    assert "checked the invoice" in sam.page.inner_text("#handoff")
    events = listed(sam.page, "#events tr.event", "type")
    assert events[0] == "run.created" and events[-1] == "run.completed", events
    assert "paid" in sam.page.inner_text("#state")
    assert sam.page.locator("#checkpoints tr.change").count() > 0
    sam.shot("run-approved-completed")


def test_rejecting_sends_the_run_down_its_reject_path(
    operator: Callable[[str], Operator], served: Served
) -> None:
    approval = _approval_id(served, "C-2")
    run_id = served.seeded.claims["C-2"]
    sam = operator("sam")
    sam.go(f"/console/runs/{run_id}")
    card = sam.page.locator(f"#approval-{approval}")
    with worker(served.app):
        card.locator("textarea[name=comment]").fill("amount too high without an assessment")
        card.locator("button[value=reject]").click()
        sam.page.wait_for_url(re.compile(f"/console/runs/{run_id}$"))
        _reload_until(sam, "#run-status", "completed")

    effects = sam.page.inner_text("#effects")
    assert "notify_claimant" in effects and "pay_claim" not in effects
    assert "rejected: claimant notified" in sam.page.inner_text("#state")
    handoff = sam.page.inner_text("#handoff")
    assert "notify_rejection" in handoff and "rejected by sam" in handoff
    assert sam.page.locator("#waits tr.wait[data-status=rejected]").count() == 1
    sam.shot("run-rejected")

    sam.go(f"/console/audit?run={run_id}")
    actions = listed(sam.page, "#entries tr.entry", "action")
    assert actions == ["approval.rejected", "run.started"]
    sam.shot("audit-of-run")


def test_correcting_a_memory_shows_its_history_and_who_recalled_it(
    operator: Callable[[str], Operator], served: Served
) -> None:
    alice = operator("alice")
    alice.go("/console/memory")
    alice.page.fill("input[name=q]", "email")
    alice.page.fill("input[name=scopes]", "user:u-1")
    alice.page.click("form.filters button:has-text('Recall')")
    alice.page.wait_for_selector("#recall article.hit")
    alice.check()
    hit = alice.page.locator(
        f"#recall article.hit[data-memory='{served.seeded.memories['email']}']"
    )
    assert "The claimant prefers email" in hit.inner_text()
    assert "lexical" in hit.locator("dl.why").inner_text()
    alice.shot("memory-recall")

    hit.locator("a").click()
    alice.page.wait_for_selector("#provenance")
    alice.check()
    assert "human" in alice.page.inner_text("#provenance")
    assert "alice" in alice.page.inner_text("#recalls")
    alice.page.fill("#correction", "The claimant prefers phone calls")
    alice.page.click("#correct button[type=submit]")
    alice.page.wait_for_selector("#history tr.version >> nth=1")
    alice.check()
    assert alice.page.inner_text("#memory-text") == "The claimant prefers phone calls"
    versions = alice.page.locator("#history tr.version")
    assert versions.count() == 2
    assert "The claimant prefers email" in versions.nth(0).inner_text()
    assert "superseded" in versions.nth(0).inner_text()
    assert "active" in versions.nth(1).inner_text()
    alice.shot("memory-corrected-history")

    alice.go(f"/console/audit?memory={served.seeded.memories['email']}")
    assert "alice" in alice.page.inner_text("#recalls")

    held = served.seeded.held_memory
    alice.go("/console/memory/pending")
    proposal = alice.page.locator(f"article.held[data-memory='{held}']")
    assert "proposed by agent-1" in proposal.inner_text()
    proposal.locator("button:has-text('Approve')").click()
    alice.page.wait_for_selector(f"article.held[data-memory='{held}']", state="detached")
    alice.check()
    alice.go(f"/console/audit?memory={held}")
    assert listed(alice.page, "#entries tr.entry", "action") == ["memory.approved"]
    alice.shot("audit-of-memory")


def test_cancelling_a_stuck_run_with_a_reason(
    operator: Callable[[str], Operator], served: Served
) -> None:
    stuck = served.seeded.stuck_runs[0]
    olga = operator("olga")
    olga.go("/console/stuck")
    row = olga.page.locator(f"tr.stuck-run[data-run='{stuck}']").first
    assert row.get_attribute("data-cause") == "effect_unanswered"
    assert f"tether runs inspect {stuck}" in row.inner_text()
    olga.shot("stuck-runs")
    cancel = row.locator("form.runbook-cancel")
    cancel.locator("input[name=reason]").fill("refund pushed by hand; ticket OPS-12")
    cancel.locator("button").click()
    olga.page.wait_for_selector(f"tr.stuck-run[data-run='{stuck}']", state="detached")
    olga.check()

    olga.go(f"/console/runs/{stuck}")
    assert "cancelled" in olga.page.inner_text("#run-status")
    assert "refund pushed by hand" in olga.page.inner_text("#handoff")
    assert "OPS-12" in olga.page.inner_text("#events")
    olga.go(f"/console/audit?run={stuck}&action=run.cancelled")
    entry = olga.page.inner_text("#entries tr.entry")
    assert "olga" in entry and "OPS-12" in entry
    olga.shot("stuck-run-cancelled")


def test_completing_a_stuck_runs_node_by_hand_from_the_runbook(
    operator: Callable[[str], Operator], served: Served
) -> None:
    """The refund was pushed by hand: the operator completes the node with what it would
    have recorded, and the run completes without calling the service again."""
    stuck = served.seeded.stuck_runs[1]
    olga = operator("olga")
    olga.go("/console/stuck")
    olga.page.locator(f"tr.stuck-run[data-run='{stuck}'] a:has-text('more actions')").click()
    olga.page.wait_for_selector("#runbook")
    olga.check()
    runbook = olga.page.locator("#runbook")
    assert "push_refund" in runbook.locator("p.error").inner_text()
    assert runbook.locator("ul.suggested li").count() > 0
    offered = [item.get_attribute("id") for item in runbook.locator("details.runbook").all()]
    assert offered == [
        "runbook-retry_node",
        "runbook-skip",
        "runbook-complete",
        "runbook-cancel",
        "runbook-fork",
    ]
    complete = olga.page.locator("#runbook-complete")
    complete.locator("summary").click()
    complete.locator("textarea[name=output]").fill('{"target": "refund-78 (paid by hand)"}')
    complete.locator("input[name=reason]").fill("refund 78 confirmed in the bank portal")
    olga.shot("runbook-complete-form")
    complete.locator("button[type=submit]").click()
    olga.page.wait_for_selector("#runbook-complete", state="detached")
    olga.check()
    assert "completed" in olga.page.inner_text("#run-status")
    assert "refund-78 (paid by hand)" in olga.page.inner_text("#state")
    assert "bank portal" in olga.page.inner_text("#events")
    assert listed(olga.page, "#events tr.event", "type")[-1] == "run.completed"
    olga.go(f"/console/audit?run={stuck}&action=run.completed_by_hand")
    assert "bank portal" in olga.page.inner_text("#entries tr.entry")
    olga.shot("runbook-completed")


def test_forking_a_run_from_a_checkpoint_opens_the_new_run(
    operator: Callable[[str], Operator], served: Served
) -> None:
    original = served.seeded.claims["C-2"]
    alice = operator("alice")
    alice.go(f"/console/runs/{original}")
    fork = alice.page.locator("#runbook-fork")
    fork.locator("summary").click()
    fork.locator("select[name=checkpoint]").select_option("1")
    fork.locator("textarea[name=patch]").fill('{"amount": 450}')
    fork.locator("input[name=reason]").fill("re-run the claim at the agreed amount")
    fork.locator("button[type=submit]").click()
    alice.page.wait_for_selector("#problem")
    assert "notify_claimant" in alice.page.inner_text("#problem")
    assert alice.page.url.endswith(f"/console/runs/{original}")
    refused = [error for error in alice.errors if error.startswith("409 ")]
    assert len(refused) == 1 and refused[0].endswith("/runbook/fork")
    alice.errors.remove(refused[0])
    alice.check()

    alice.go(f"/console/runs/{original}")
    fork.locator("summary").click()
    fork.locator("select[name=checkpoint]").select_option("1")
    fork.locator("textarea[name=patch]").fill('{"amount": 450}')
    fork.locator("input[name=rerun_effects]").check()
    fork.locator("input[name=reason]").fill("re-run the claim at the agreed amount")
    fork.locator("button[type=submit]").click()
    alice.page.wait_for_url(lambda url: f"/console/runs/{original}" not in url)
    alice.check()
    forked = alice.page.url.rsplit("/", 1)[1]
    assert alice.page.inner_text("#run-node") == "request_approval"
    assert '"amount": 450' in alice.page.inner_text("#state")
    alice.shot("runbook-forked")
    assert served.app.runs.get(_admin(served), forked).run_id == forked


def test_a_viewer_sees_no_decision_form_and_a_forged_decision_is_refused(
    operator: Callable[[str], Operator], served: Served
) -> None:
    run_id = served.seeded.hostile_run
    approval = served.app.runs.get(_admin(served), run_id).wait_id
    vic = operator("vic")
    vic.go("/console/approvals")
    card = vic.page.locator(f"#approval-{approval}")
    assert card.count() == 1 and card.locator("form.decide").count() == 0
    assert vic.page.locator("nav a:has-text('Audit')").count() == 0
    csrf = vic.page.get_attribute("header form input[name=csrf]", "value")
    forged = vic.page.request.post(
        f"{vic.base}/console/approvals/{approval}/decide",
        form={"csrf": csrf or "", "decision": "approve"},
    )
    assert forged.status == 403
    assert "runs.decide" in forged.text()
    vic.go("/console/audit")
    assert vic.page.inner_text("h1").startswith("403")
    assert served.app.runs.get(_admin(served), run_id).status.value == "waiting_for_approval"


def test_a_post_without_the_sessions_csrf_token_is_refused(
    operator: Callable[[str], Operator], served: Served
) -> None:
    run_id = served.seeded.hostile_run
    approval = served.app.runs.get(_admin(served), run_id).wait_id
    sam = operator("sam")
    url = f"{sam.base}/console/approvals/{approval}/decide"
    csrf = sam.page.get_attribute("header form input[name=csrf]", "value") or ""
    for form, headers in (
        ({"decision": "approve"}, {}),
        ({"decision": "approve", "csrf": "0" * 64}, {}),
        ({"decision": "approve"}, {"X-CSRF-Token": "0" * 64}),
        ({"decision": "approve", "csrf": csrf}, {"Origin": "http://evil.example"}),
    ):
        answer = sam.page.request.post(url, form=form, headers=headers)
        assert answer.status == 403, (form, headers)
    assert served.app.runs.get(_admin(served), run_id).status.value == "waiting_for_approval"


def test_a_key_of_another_tenant_never_sees_this_tenants_runs(
    operator: Callable[[str], Operator], served: Served
) -> None:
    gina = operator("gina")
    assert gina.page.inner_text("#whoami") == "gina @ globex"
    assert listed(gina.page, "table.runs tbody tr[data-run]", "run") == [served.seeded.globex_run]
    for claim_run in served.seeded.claims.values():
        gina.go(f"/console/runs/{claim_run}")
        assert gina.page.inner_text("h1").startswith("404")
    gina.go("/console/approvals")
    runs_asking = gina.page.locator("article.approval header a").all_inner_texts()
    assert set(runs_asking) <= {served.seeded.globex_run}
    gina.go(f"/console/memory/{served.seeded.memories['email']}")
    assert gina.page.inner_text("h1").startswith("404")
    gina.shot("other-tenant")


def test_stored_markup_is_shown_as_text_and_never_runs(
    operator: Callable[[str], Operator], served: Served
) -> None:
    alice = operator("alice")
    for path in (
        f"/console/runs/{served.seeded.hostile_run}",
        f"/console/memory/{served.seeded.memories['hostile']}",
        "/console/approvals",
    ):
        alice.go(path)
        assert HOSTILE in alice.page.inner_text("main"), path
        assert alice.page.evaluate("window.pwned === undefined"), path
        assert alice.page.locator("main script, main img").count() == 0, path
        assert alice.page.locator("script").count() == 1, path
    alice.shot("hostile-escaped")


def test_the_session_cookie_is_sealed_and_logout_ends_it(
    operator: Callable[[str], Operator], served: Served
) -> None:
    sam = operator("sam")
    cookies = {cookie["name"]: cookie for cookie in sam.page.context.cookies()}
    session = cookies["tether_console"]
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    secret = served.seeded.keys["sam"].rsplit("~", 1)[1]
    assert secret not in session["value"] and "tk~" not in session["value"]
    assert sam.page.evaluate("document.cookie") == ""
    sam.page.click("header button:has-text('Log out')")
    sam.page.wait_for_url(re.compile(r"/console/login"))
    assert "tether_console" not in {c["name"] for c in sam.page.context.cookies()}
    sam.go("/console/approvals")
    assert "/console/login" in sam.page.url


def test_a_platform_administrator_picks_a_tenant(
    operator: Callable[[str], Operator], served: Served
) -> None:
    root = operator("root")
    assert root.page.locator("select[name=tenant] option").all_inner_texts() == [
        "choose a tenant",
        "acme",
        "globex",
    ]
    root.page.select_option("select[name=tenant]", "globex")
    wait_until(
        lambda: root.page.locator("table.runs tbody tr[data-run]").count() == 1,
        "globex's runs",
    )
    assert root.page.locator("table.runs a").count() == 0
    root.check()
    root.shot("platform-runs")


def test_an_unexpected_failure_is_a_page_and_the_connection_goes_on(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in a page answers 500 with the console's headers, names nothing of the
    failure, and the next request on the same connection is served."""
    from tether.server.console import runs as run_pages

    def broken(*_: object) -> None:
        raise RuntimeError("a secret detail")

    monkeypatch.setattr(run_pages, "checkpoint_views", broken)
    with httpx.Client(base_url=served.base) as client:
        login = client.get("/console/login")
        token = re.search(r'name="csrf" value="([0-9a-f]{64})"', login.text)
        assert token is not None
        client.post(
            "/console/login", data={"csrf": token.group(1), "api_key": served.seeded.keys["sam"]}
        )
        failed = client.get(f"/console/runs/{served.seeded.claims['C-1']}")
        assert failed.status_code == 500 and "secret detail" not in failed.text
        assert failed.headers["content-security-policy"] == CSP
        assert client.get("/console/runs").status_code == 200
