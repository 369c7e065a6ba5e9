"""The pieces of bench/run (the benchmark driver), one concern a module."""
