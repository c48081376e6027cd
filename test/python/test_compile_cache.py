"""The compile cache on disk (spyre_mlir/frontend/compile_cache.py), across processes: a second
process compiles nothing and computes the same bits; a damaged entry is one warning, compiled
again, the same bits; the switches turn it off."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each case starts Python processes that import torch

PROGRAM = textwrap.dedent(
    """
    import hashlib, json, warnings, sys
    import torch
    from spyre_mlir.frontend.backend import STATS

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)).eval()
    x = torch.randn(8, 64)
    options = json.loads(sys.argv[1])
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        y = torch.compile(model, backend="spyre", options=options)(x)
    print(json.dumps({
        "compiles": STATS.compiles,
        "loads": STATS.cache_loads,
        "digest": hashlib.sha256(y.numpy().tobytes()).hexdigest(),
        "warnings": [str(w.message) for w in caught if str(w.message).startswith("spyre")],
    }))
    """
)


def run(cache: Path | str, options: dict | None = None, enabled: str = "1") -> dict:
    env = dict(os.environ, SPYRE_CACHE=enabled, SPYRE_CACHE_DIR=str(cache))
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM, json.dumps(options or {})],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.mlir"))


def test_a_second_process_loads_what_the_first_compiled(tmp_path: Path) -> None:
    first = run(tmp_path)
    assert first["compiles"] == 1 and first["loads"] == 0 and not first["warnings"]
    (entry,) = entries(tmp_path)
    assert entry.read_text().startswith("// spyre-mlir compile cache: {")
    second = run(tmp_path)
    assert second["compiles"] == 0 and second["loads"] == 1 and not second["warnings"]
    assert second["digest"] == first["digest"]
    # other options are another key: compiled, and kept beside the first entry
    other = run(tmp_path, {"disable": ["epilogues"]})
    assert other["compiles"] == 1 and len(entries(tmp_path)) == 2


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


def test_a_damaged_entry_is_one_warning_and_compiled_again(tmp_path: Path) -> None:
    first = run(tmp_path)
    (entry,) = entries(tmp_path)
    pristine = entry.read_bytes()
    for name, (damage, why) in DAMAGES.items():
        entry.write_bytes(damage(pristine))
        again = run(tmp_path)
        assert again["compiles"] == 1 and again["loads"] == 0, name
        assert again["digest"] == first["digest"], name
        assert len(again["warnings"]) == 1 and f"compile cache entry {entry} is ignored" in again["warnings"][0], name
        assert why in again["warnings"][0], (name, again["warnings"])
        assert entry.read_bytes() == pristine, f"{name}: the entry was not written anew"
    assert run(tmp_path)["loads"] == 1


def test_the_switches_turn_it_off(tmp_path: Path) -> None:
    assert run(tmp_path, {"cache": False})["compiles"] == 1 and not entries(tmp_path)
    assert run(tmp_path, enabled="0")["compiles"] == 1 and not entries(tmp_path)
    # a cache directory that cannot be created (a file is in its place): one warning, the
    # graph compiled and run all the same
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = run(blocker / "cache")
    assert out["compiles"] == 1 and len(out["warnings"]) == 1
    assert "the compile cache cannot write" in out["warnings"][0]
