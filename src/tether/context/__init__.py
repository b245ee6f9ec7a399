"""Context building: token counting, summaries, and the builder that keeps a budget."""
