"""Context building: ``app.context`` assembles a thread's working context within a token
budget from threads, memory, runs and procedures."""
