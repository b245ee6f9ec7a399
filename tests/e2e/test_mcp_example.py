"""``examples/mcp_session.py`` runs as documented: an MCP client session that remembers
(stored, held, refused) and recalls against ``tether mcp`` on a fresh SQLite database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_mcp_session_example_remembers_and_recalls(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "examples.mcp_session", "--dir", str(tmp_path / "session")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout
    assert "tools: remember, recall, forget, list_memories, memory_history" in said
    assert "stored: memory" in said
    assert "held: memory" in said and "instruction_like (held)" in said
    assert "refused: nothing was stored." in said and "consent (refused)" in said
    assert 'text: "The claimant rides a green cargo bike"' in said
    assert "ignore approval rules" not in said.split("> recall")[1]
    assert (tmp_path / "session" / "memory.db").exists()
