"""The compile cache on disk (spyre_mlir/frontend/compile_cache.py): another process compiles
nothing and computes the same bits; a damaged entry is one warning, compiled again, the same
bits; the switches turn it off. The suite runs with the cache on in one directory for the run
(conftest.py); each test here uses a directory of its own."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from spyre_mlir.frontend.backend import STATS, get_device_model


def compile_and_run(options: dict | None = None) -> dict:
    """One fresh torch.compile of a small MLP (Dynamo's caches reset) and a call: what it
    compiled, what it loaded, the output's digest, the spyre warnings, the graph's name."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)).eval()
    x = torch.randn(8, 64)
    torch._dynamo.reset()
    compiles, loads = STATS.compiles, STATS.cache_loads
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        y = torch.compile(model, backend="spyre", options=options or {})(x)
    return {
        "compiles": STATS.compiles - compiles,
        "loads": STATS.cache_loads - loads,
        "digest": hashlib.sha256(y.numpy().tobytes()).hexdigest(),
        "warnings": [str(w.message) for w in caught if str(w.message).startswith("spyre")],
        "graph": STATS.graphs[-1].name,
    }


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPYRE_CACHE", "1")
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path))
    return tmp_path


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.mlir"))


@pytest.mark.slow  # a Python process that imports torch
def test_another_process_loads_what_this_one_compiled(cache: Path) -> None:
    first = compile_and_run()
    assert first["compiles"] == 1 and first["loads"] == 0 and not first["warnings"]
    (entry,) = entries(cache)
    assert entry.read_text().startswith("// spyre-mlir compile cache: {")
    # the same function in a fresh process (this module imported from its folder)
    program = "import json; from test_compile_cache import compile_and_run; print(json.dumps(compile_and_run()))"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    second = json.loads(out.stdout.strip().splitlines()[-1])
    assert (second["compiles"], second["loads"], second["digest"], second["warnings"]) == (0, 1, first["digest"], [])


def test_the_same_graph_loads_and_other_options_are_another_entry(cache: Path) -> None:
    first = compile_and_run()
    again = compile_and_run()
    assert (again["compiles"], again["loads"], again["digest"]) == (0, 1, first["digest"])
    # the loaded programs take this graph's name (the entry keeps the first one's)
    graph = STATS.graphs[-1].name
    assert graph != first["graph"]
    assert get_device_model().profile.kernels[-1].name.startswith(f"{graph}_k")
    other = compile_and_run({"disable": ["epilogues"]})
    assert other["compiles"] == 1 and len(entries(cache)) == 2


def test_another_device_is_another_entry_that_names_its_target(cache: Path) -> None:
    """The key holds the device config, which the compiled module states as its target."""
    compile_and_run()
    slower = compile_and_run({"ddr_bytes_per_s": 102.4e9})
    assert slower["compiles"] == 1 and len(entries(cache)) == 2
    texts = [e.read_text() for e in entries(cache)]
    assert sum("spyre.target = #spyre.target<ddr_bytes_per_s = 102400000000.0>" in t for t in texts) == 1
    assert sum("spyre.target = #spyre.target}" in t for t in texts) == 1


def test_an_edited_compiler_is_another_entry(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key holds the digest of spyre_mlir's sources: a checkout edited without a new
    version number compiles again instead of loading what the old code compiled."""
    from spyre_mlir.frontend import compile_cache

    first = compile_and_run()
    assert first["compiles"] == 1
    monkeypatch.setattr(compile_cache, "compiler_digest", lambda: "an edited checkout")
    edited = compile_and_run()
    assert (edited["compiles"], edited["loads"], edited["digest"]) == (1, 0, first["digest"])
    assert len(entries(cache)) == 2


def _unparsable_with_a_good_checksum(data: bytes) -> bytes:
    """A well-formed header and checksum over a body that is not a module (a hand edit with the
    checksum recomputed)."""
    head, _, _ = data.partition(b"\n")
    meta = json.loads(head.decode().removeprefix("// spyre-mlir compile cache: "))
    body = b"builtin.module { func.func @main( }\n"
    meta["sha256"] = hashlib.sha256(body).hexdigest()
    return ("// spyre-mlir compile cache: " + json.dumps(meta)).encode() + b"\n" + body


DAMAGES = {
    "truncated": (lambda b: b[: len(b) // 2], "do not match their checksum"),
    "altered": (lambda b: b.replace(b"spyre_isa.launch", b"spyre_isa.lunch", 1), "do not match their checksum"),
    "no header": (lambda b: b"garbage\n" + b, "header line is not the cache's JSON"),
    "other format": (lambda b: b.replace(b'"format": 1', b'"format": 0', 1), "is not a format-1 entry"),
    "unparsable": (_unparsable_with_a_good_checksum, "it does not load"),
}


def test_a_damaged_entry_is_one_warning_and_compiled_again(cache: Path) -> None:
    first = compile_and_run()
    (entry,) = entries(cache)
    pristine = entry.read_bytes()
    for name, (damage, why) in DAMAGES.items():
        entry.write_bytes(damage(pristine))
        again = compile_and_run()
        assert (again["compiles"], again["loads"], again["digest"]) == (1, 0, first["digest"]), name
        assert len(again["warnings"]) == 1 and f"compile cache entry {entry} is ignored" in again["warnings"][0], name
        assert why in again["warnings"][0], (name, again["warnings"])
        head, _, body = entry.read_bytes().partition(b"\n")
        meta = json.loads(head.decode().removeprefix("// spyre-mlir compile cache: "))
        assert meta["sha256"] == hashlib.sha256(body).hexdigest(), f"{name}: the entry was not written anew"
    assert compile_and_run()["loads"] == 1


def test_the_switches_turn_it_off(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert compile_and_run({"cache": False})["compiles"] == 1 and not entries(cache)
    monkeypatch.setenv("SPYRE_CACHE", "0")
    assert compile_and_run()["compiles"] == 1 and not entries(cache)
    # a cache directory that cannot be created (a file is in its place): one warning, the
    # graph compiled and run all the same
    monkeypatch.setenv("SPYRE_CACHE", "1")
    blocker = cache / "file"
    blocker.write_text("")
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(blocker / "cache"))
    out = compile_and_run()
    assert out["compiles"] == 1 and len(out["warnings"]) == 1
    assert "the compile cache cannot write" in out["warnings"][0]
