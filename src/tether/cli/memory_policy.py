"""``tether memory policy``: a tenant's memory policy, its write settings and who reads what."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from tether.cli._common import (
    ActorOption,
    JsonOption,
    TenantOption,
    UrlOption,
    acting,
    console,
    open_app,
    print_json,
    print_table,
    reporting,
)
from tether.cli.runs import json_object
from tether.errors import InvalidInput
from tether.memory.access import DEFAULT_READ_ACCESS
from tether.memory.policy import PolicyConfig
from tether.principals import Role

policy_app = typer.Typer(
    help="The tenant's memory policy: write settings and the read-access table.",
    no_args_is_help=True,
)

MERGED_BY_KEY = ("retention_days", "read_access")
"""The policy's tables: a change names the rows it replaces and keeps the others."""

Changes = Annotated[
    str,
    typer.Argument(
        help="The fields to change, as a JSON object inline, @FILE, or @- (stdin); e.g. "
        '\'{"read_access": {"viewer": {"scopes": ["user"], "clearance": "public"}}}\'.',
        show_default=False,
    ),
]


@policy_app.command("show")
def show(
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """The policy in effect: write settings, and per role the scopes and clearance it reads."""
    with reporting(json_output), open_app(url) as app:
        config = app.memory.policy(acting(app, tenant, actor))
        print_json(config) if json_output else _print(config)


@policy_app.command("set")
def set_policy(
    changes: Changes,
    tenant: TenantOption,
    actor: ActorOption,
    url: UrlOption = None,
    json_output: JsonOption = False,
) -> None:
    """Change the policy (admin): the fields given replace the current ones; in
    read_access and retention_days only the rows given are replaced. Audited as
    memory.policy_changed; an invalid change is refused and changes nothing."""
    with reporting(json_output):
        given = json_object(changes, "CHANGES", "the policy fields to change")
        unknown = sorted(set(given) - set(PolicyConfig.model_fields))
        if unknown:
            known = ", ".join(PolicyConfig.model_fields)
            raise InvalidInput(f"unknown policy field(s) {', '.join(unknown)}; known: {known}")
        with open_app(url) as app:
            principal = acting(app, tenant, actor)
            config = PolicyConfig.model_validate(
                merged(app.memory.policy(principal).model_dump(mode="json"), given)
            )
            app.memory.configure(principal, config)
        print_json(config) if json_output else _print(config)


def merged(current: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``current`` with ``given`` laid over it, the tables row by row."""
    result = {**current, **given}
    for table in MERGED_BY_KEY:
        rows = given.get(table)
        if isinstance(rows, dict):
            result[table] = {**current.get(table, {}), **rows}
    return result


def _print(config: PolicyConfig) -> None:
    console.print(
        f"confidence threshold {config.confidence_threshold:.2f}; PII {config.pii_action}; "
        f"write budget per run {config.run_write_budget}; reinforce at similarity "
        + ("off" if config.reinforce_similarity is None else f"{config.reinforce_similarity}"),
        highlight=False,
    )
    console.print(
        "retention: "
        + ", ".join(
            f"{kind} {'kept' if days is None else f'{days} days'}"
            for kind, days in config.retention_days.items()
        ),
        highlight=False,
    )
    console.print(f"disabled rules: {', '.join(config.disabled_rules) or 'none'}")
    table = Table("role", "reads scopes", "up to", "row", title="read access")
    for role in Role:
        own = config.read_access.get(role)
        row = own or DEFAULT_READ_ACCESS.get(role)
        if row is None:
            continue
        scopes = ", ".join(scope.value for scope in row.scopes) or "none"
        table.add_row(role.value, scopes, row.clearance.value, "tenant" if own else "default")
    print_table(table)
