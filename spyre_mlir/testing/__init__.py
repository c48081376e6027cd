"""What the tests (test/python) and the benchmarks (bench/) share, importable from both.

    criteria     the pass criteria: the DL16 bound of small programs, the model criterion
    weights      random weights that make every part of a tiny model show in its output
    fuzz         the fuzz harness: seeds and mutations, the runner, the spyre-level oracle
    hypothesis   Hypothesis draws independent of the modules a process has loaded

Like `torch.testing`, this package sits above the rest of spyre_mlir (it may import any of it)
and nothing in the compiler, the runtime or the front end imports it. Importing the package
imports none of its modules.
"""
