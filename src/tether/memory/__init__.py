"""Governed memory: the model proposes, a policy decides (in progress, see issue notes)."""
