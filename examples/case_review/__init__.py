"""The case-review example: a run that waits for evidence and a supervisor, and survives
being killed between a side effect and its record."""
