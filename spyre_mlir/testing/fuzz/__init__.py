"""The fuzz harness (docs/fuzzing.md): `mutations` (the seeds, the mutation operators, the
Hypothesis strategy of recipes), `runner` (cases through spyre-opt and spyre-run in killable
worker processes; outcomes and summary) and `oracle` (what a spyre-level function computes).
bench/fuzz.py runs it as a table, test/python/testing/test_fuzz.py as the CI slice."""
