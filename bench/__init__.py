"""Benchmarks of Tether against its peers, run side by side (``make bench``)."""
