"""Test support shipped with mlkd (import explicitly; ``import mlkd`` does not load it).

:mod:`mlkd.testing.loss_references` holds brute-force references of the losses, written from each
paper's formula with plain loops. The unit tests check the package's closed forms against them and
``tools/benchmarks/benchmark_losses.py`` times the closed forms against them, so both use the one
copy here (a tool must not import from ``tests/``).
"""
