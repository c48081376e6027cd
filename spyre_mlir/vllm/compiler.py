"""vLLM's compiler interface on the spyre backend: each graph piece vLLM splits out (the
pieces between its attention ops) is compiled by `spyre_backend`, so a piece with a symbolic
token count runs padded to the length buckets (frontend/buckets.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch.fx as fx
from vllm.compilation.compiler_interface import CompilerInterface

from spyre_mlir.frontend.backend import spyre_backend


class SpyreCompiler(CompilerInterface):
    name = "spyre"

    def compile(
        self,
        graph: fx.GraphModule,
        example_inputs: list[Any],
        compiler_config: dict[str, Any],
        compile_range: Any,
        key: str | None = None,
    ) -> tuple[Callable[..., Any] | None, Any | None]:
        # the compiled programs are cached on disk by the backend itself (frontend/compile_cache.py)
        return spyre_backend(graph, example_inputs), None
