"""`gc_paused()`: CPython's cyclic garbage collector held off while the compiler builds IR.

Compiling a model and preparing its programs allocate millions of objects that stay alive
(IR, instruction plans, timing works). CPython's collector counts allocations: every 700 it
scans the youngest objects, and often enough it scans every object of the process (torch,
transformers, the model, the IR), which on a BERT-base compile took ~0.4 s a time, six times,
to find next to nothing (bench/host.py's 12-layer compile: ~2.5 s of ~13). Inside
`gc_paused()` the collector does not run; the cycles made meanwhile (rewritten IR) are left
for its next run after the pause. Reference counting frees everything else as usual.

    with gc_paused():      # was_enabled = gc.isenabled(); gc.disable()
        ...                # ... ; if was_enabled: gc.enable()

Nested pauses are fine: only the outermost turns the collector back on.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
