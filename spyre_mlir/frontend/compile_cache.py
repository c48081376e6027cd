"""The compile cache on disk: a graph compiled once is loaded, not compiled, by a later process.

An entry is the compiled module (torch-level host ops and spyre_isa programs and launches, as
MLIR text with its dense_resource blobs) under a key that names everything the compile reads:

    key = sha256(format, spyre_mlir / torch / xdsl versions, the sha256 of spyre_mlir's own
                 source files (an edited checkout of one version is another compiler), the
                 device config, the backend's
                 options (strict, optimizations), the aot_autograd graph's code, each
                 placeholder's shape, stride and dtype, and each constant tensor's bytes)

Parameters are graph inputs (aot_autograd lifts them), so weights are not in the key: one entry
serves any weights of the same architecture. The file, `<key>.mlir` in the cache directory,
starts with one line of JSON (the key, the sha256 of the rest, what the caller needs beside the
module) and is written to a temporary file and renamed, so a reader sees a whole entry or none.

An entry that is truncated, altered, unparsable or from another format is ignored with one
warning naming the file and why, and compiled again (the new entry replaces it): never a crash,
never a program that is not the one compiled for the key. A cache directory that cannot be
written is a warning, not an error. Entries are never evicted (delete the directory to clear it).

    SPYRE_CACHE_DIR   the directory (default: $XDG_CACHE_HOME/spyre-mlir, else ~/.cache/spyre-mlir)
    SPYRE_CACHE=0     no cache in this process (the backend option cache=False: for one compile)
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import tempfile
import warnings
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.parser import Parser
from xdsl.printer import Printer

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.dialects.torch import TorchContext, make_context
from spyre_mlir.frontend.fx_importer import graph_attribute
from spyre_mlir.pipeline import Optimizations
from spyre_mlir.target.config import DeviceConfig

FORMAT = 1
"""The entry format; a change makes every older entry another key's."""

_UNWRITABLE: set[Path] = set()

__all__ = ["CachedGraph", "CompileCache", "cache_dir", "cache_enabled", "cache_where", "graph_key", "rename_graph"]


def cache_enabled() -> bool:
    """False when SPYRE_CACHE is 0 (or off, false, no)."""
    return os.environ.get("SPYRE_CACHE", "1").strip().lower() not in ("0", "off", "false", "no")


def cache_dir() -> Path:
    """SPYRE_CACHE_DIR, else spyre-mlir under the user's cache directory."""
    given = os.environ.get("SPYRE_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spyre-mlir"


def cache_where() -> str:
    """Where compiled graphs are kept, for a reader: the directory, or why none."""
    return str(cache_dir()) if cache_enabled() else "off: SPYRE_CACHE=0"


@functools.lru_cache(maxsize=1)
def compiler_digest() -> str:
    """The sha256 of the spyre_mlir package's Python sources (paths and bytes, in path order)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def graph_key(gm: torch.fx.GraphModule, config: DeviceConfig, strict: bool, opts: Optimizations) -> str:
    """The cache key of compiling `gm` (see the module docstring)."""
    h = hashlib.sha256()

    def put(*parts: Any) -> None:
        for p in parts:
            h.update(p if isinstance(p, bytes) else repr(p).encode())
            h.update(b"\0")

    put(FORMAT, version("spyre-mlir"), compiler_digest(), torch.__version__, version("xdsl"), config, strict, opts)
    put(gm.code)
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor):
                put(node.name, tuple(val.shape), tuple(val.stride()), val.dtype)
            else:
                put(node.name, type(val).__name__, val if isinstance(val, int | float | bool) else None)
        elif node.op == "get_attr":
            value = graph_attribute(gm, str(node.target))
            if isinstance(value, torch.Tensor):
                put(node.target, tuple(value.shape), value.dtype, _tensor_bytes(value))
            else:
                put(node.target, type(value).__name__)
    return h.hexdigest()


def _tensor_bytes(t: torch.Tensor) -> bytes:
    """A constant's bytes, read without dispatching an op: the key is made under aot_autograd's
    fake mode, where any op on a real tensor (a `detach`, a `contiguous`) is refused."""
    with torch._subclasses.fake_tensor.unset_fake_temporarily(), torch.no_grad():
        if not t.numel():
            return b""
        return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


@dataclass
class CachedGraph:
    """A compiled graph as the backend runs it."""

    module: ModuleOp
    ctx: TorchContext
    """The context holding the module's blobs."""
    out_dtypes: list[torch.dtype]
    """The graph's output dtypes."""
    torch_ops: int
    """The graph's torch compute ops before compiling (its GraphReport's denominator)."""
    graph: str
    """The name the graph was compiled under (its kernels' prefix)."""


def rename_graph(entry: CachedGraph, graph: str) -> None:
    """Give a loaded entry's programs and launches the names of graph `graph` (its kernels are
    `<graph>_k<i>`): the graph names of the process that compiled it may be another graph's here,
    and profiles name launches by kernel."""
    old, new = f"{entry.graph}_", f"{graph}_"

    def renamed(name: str) -> str:
        return new + name.removeprefix(old) if name.startswith(old) else name

    for op in entry.module.walk():
        if isinstance(op, spyre_isa.ProgramOp):
            op.sym_name = StringAttr(renamed(op.sym_name.data))
        elif isinstance(op, spyre_isa.LaunchOp):
            op.program = SymbolRefAttr(renamed(op.program.root_reference.data))
            if isinstance(op.kernel, StringAttr):
                op.attributes["kernel"] = StringAttr(renamed(op.kernel.data))
    entry.graph = graph


class CompileCache:
    """Entries in one directory (see the module docstring)."""

    def __init__(self, directory: Path):
        self.directory = directory

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.mlir"

    def load(self, key: str) -> CachedGraph | None:
        """The entry for `key`, or None (no entry, or a damaged one: one warning says which and why)."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            return self._ignored(path, f"it cannot be read ({e.strerror})")
        head, sep, body = data.partition(b"\n")
        try:
            meta = json.loads(head.decode().removeprefix("// spyre-mlir compile cache: "))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self._ignored(path, "its header line is not the cache's JSON")
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("key") != key:
            return self._ignored(path, f"it is not a format-{FORMAT} entry for its key")
        if not sep or hashlib.sha256(body).hexdigest() != meta.get("sha256"):
            return self._ignored(path, "its contents do not match their checksum (truncated or altered)")
        try:
            out_dtypes = [getattr(torch, str(name).removeprefix("torch.")) for name in meta["out_dtypes"]]
            if not all(isinstance(d, torch.dtype) for d in out_dtypes):
                raise TypeError("not a dtype")
            torch_ops, graph = int(meta["torch_ops"]), str(meta["graph"])
            ctx = make_context()
            module = Parser(ctx, body.decode()).parse_module()
            module.verify()
        except Exception as e:  # whatever is wrong with an entry, it is compiled again
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            return self._ignored(path, f"it does not load ({first})")
        return CachedGraph(module, ctx, out_dtypes, torch_ops, graph)

    def store(self, key: str, entry: CachedGraph) -> None:
        """Write the entry for `key` (replacing any); a directory that cannot be written is a warning."""
        text = io.StringIO()
        printer = Printer(stream=text)
        printer.print_op(entry.module)
        text.write("\n")
        printer.print_metadata(entry.ctx.loaded_dialects)
        body = text.getvalue().encode()
        meta = {
            "format": FORMAT,
            "key": key,
            "sha256": hashlib.sha256(body).hexdigest(),
            "out_dtypes": [str(d) for d in entry.out_dtypes],
            "torch_ops": entry.torch_ops,
            "graph": entry.graph,
        }
        head = ("// spyre-mlir compile cache: " + json.dumps(meta)).encode()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{key[:16]}-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(head + b"\n" + body)
                os.replace(tmp, self.path(key))
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as e:
            if self.directory not in _UNWRITABLE:  # one warning per directory and process
                _UNWRITABLE.add(self.directory)
                warnings.warn(
                    f"spyre: the compile cache cannot write {self.directory} ({e.strerror}): compiled graphs are not kept",
                    stacklevel=3,
                )

    @staticmethod
    def _ignored(path: Path, why: str) -> None:
        warnings.warn(f"spyre: compile cache entry {path} is ignored: {why}; compiling again", stacklevel=3)
        return None
