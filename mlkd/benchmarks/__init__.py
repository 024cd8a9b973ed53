"""What the benchmark and device-check tools of ``tools/benchmarks/`` run.

The tools are thin command-line wrappers; the work lives here so that it is importable (the
multi-process checks start their workers by module name, which ``spawn`` needs on CUDA) and
shared: :mod:`.common` (models from the shipped configs, random batches, interleaved timing, peak
memory, tables), :mod:`.device_checks` (``gpu_check.py``), :mod:`.train_throughput` and
:mod:`.data_pipeline` (``benchmark_train_throughput.py``).
"""
