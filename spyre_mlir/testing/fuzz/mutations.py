"""Seeds and mutations for the spyre-mlir fuzz harness (see docs/fuzzing.md).

A *seed* is one module of the test suite: every `.mlir` file under test/filecheck (split at
`// -----`, comment lines dropped), test/fixtures/*.mlir and the torch-mlir fixtures
test/fixtures/models/*.mlir. A *recipe* is a small JSON-able value drawn by Hypothesis:

    {"seed": "test/filecheck/inputs/kernels.mlir", "muts": [["layout", 77, 3], ["ssa_use", 9, 120]], "cores": 8}

`seed` names the seed (drawn by weight: the large torch-mlir fixtures less often), each
mutation is `[operator, a, b]` where `a` picks the site (modulo the number of sites the
operator finds in the text) and `b` the new value, and `cores` (or None) is the device's core
count for the pipeline and the device model. `apply_recipe` turns a recipe into text,
deterministically, so a recipe alone reproduces a case.

Mutations apply to the module body only; the `{-# dialect_resources ... #-}` section of the
fixtures (weights as hex blobs) has an operator of its own (`resource`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from spyre_mlir.target.config import DEFAULT_CONFIG
from spyre_mlir.target.constants import STICK_BYTES

ROOT = Path(__file__).resolve().parents[3]
"""The repository: its test suite is the corpus of seeds."""
TEST = ROOT / "test"

LARGE_BYTES = 20_000
"""Seeds whose body is larger than this (the torch-mlir model fixtures) are drawn with
LARGE_WEIGHT in total."""

LARGE_WEIGHT = 0.1
"""Share of cases drawn from the large seeds (each costs seconds: parse, compile, run, reference)."""

LARGE_OPERATORS = frozenset(
    {
        "line_delete",
        "line_duplicate",
        "line_swap",
        "token_replace",
        "int_value",
        "float_value",
        "elem_type",
        "shape_dim",
        "ssa_use",
        "resource",
        "truncate",
        "dim_global",
        "dtype_global",
        "torch_const",
    }
)
"""The cheaper, more targeted operators used on the large seeds."""


@dataclass(frozen=True)
class Seed:
    name: str
    """`path` relative to the repository, `#k` for the k-th `// -----` chunk."""
    body: str
    """The module text without its resource section."""
    resources: str
    """The `{-# ... #-}` section, or ''."""

    @property
    def text(self) -> str:
        return self.body + self.resources

    @property
    def large(self) -> bool:
        return len(self.body) > LARGE_BYTES


def _split_resources(text: str) -> tuple[str, str]:
    i = text.find("\n{-#")
    return (text, "") if i < 0 else (text[: i + 1], text[i + 1 :])


def _strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")) + "\n"


@cache
def load_seeds() -> tuple[Seed, ...]:
    seeds: list[Seed] = []
    for path in sorted((TEST / "filecheck").rglob("*.mlir")):
        if "Output" in path.parts:  # lit's working files: there only after a lit run, so the corpus would vary
            continue
        chunks = re.split(r"^// -----\s*$", path.read_text(), flags=re.M)
        for k, chunk in enumerate(chunks):
            body, res = _split_resources(_strip_comments(chunk))
            if body.strip():
                rel = path.relative_to(ROOT).as_posix()
                seeds.append(Seed(f"{rel}#{k}" if len(chunks) > 1 else rel, body, res))
    for path in sorted((TEST / "fixtures").glob("*.mlir")) + sorted((TEST / "fixtures" / "models").glob("*.mlir")):
        body, res = _split_resources(path.read_text())
        seeds.append(Seed(path.relative_to(ROOT).as_posix(), _strip_comments(body), res))
    return tuple(seeds)


def seed_schedule(n: int, seed: int) -> list[str]:
    """The seed of each of n cases, drawn from random.Random(seed) so that the seeds are
    covered evenly (Hypothesis, which draws the mutations, favours its first choices).

    Weights: a file's k chunks share sqrt(k) (the many one-error chunks of the invalid.mlir
    files do not crowd out the rest), seeds with a function (runnable: they reach the pipeline
    and the device model) count four times, and the large seeds share LARGE_WEIGHT."""
    import random

    seeds = load_seeds()
    chunks = Counter(s.name.split("#")[0] for s in seeds)
    raw = [(4.0 if "func.func" in s.body else 1.0) / math.sqrt(chunks[s.name.split("#")[0]]) for s in seeds]
    large = sum(r for s, r in zip(seeds, raw) if s.large) or 1.0
    small = sum(r for s, r in zip(seeds, raw) if not s.large)
    weights = [r * (LARGE_WEIGHT / large if s.large else (1 - LARGE_WEIGHT) / small) for s, r in zip(seeds, raw)]
    return [s.name for s in random.Random(seed).choices(seeds, weights, k=n)]


def seed_named(name: str) -> Seed:
    for s in load_seeds():
        if s.name == name:
            return s
    raise KeyError(f"no seed named {name!r} (the corpus changed?)")


def _mix(x: int, bits: int) -> int:
    """A bijection of range(2**bits) that spreads Hypothesis's many small and boundary draws
    over the whole range (operators take a site and a value modulo their counts)."""
    mask = (1 << bits) - 1
    x &= mask
    for _ in range(2):
        x = (x * 0x9E3779B1 + 0x7F4A7C15) & mask
        x ^= x >> (bits // 2)
    return x


# region Lexing

TOKEN = re.compile(
    r"""
      "(?:[^"\\\n]|\\.)*"                 # string
    | %[A-Za-z0-9_.$-]+(?:\#\d+)?        # SSA value (and result index)
    | \^[A-Za-z0-9_.$-]+                 # block label
    | @[A-Za-z0-9_.$-]+                  # symbol
    | \#[A-Za-z_][A-Za-z0-9_.$]*         # attribute (alias or dialect attribute)
    | ![A-Za-z_][A-Za-z0-9_.$]*          # dialect type
    | 0x[0-9A-Fa-f]+                     # hex literal
    | -?\d+\.\d*(?:[eE][+-]?\d+)?        # float
    | -?\d+                              # integer
    | [A-Za-z_][A-Za-z0-9_.$]*           # keyword, op name, builtin type
    | ->|\S                              # punctuation
    """,
    re.X,
)
INT = re.compile(r"(?<![\w.%#@^!$-])-?\d+(?![\w.])")
FLOAT = re.compile(r"(?<![\w.%#@^!$])-?\d+\.\d*(?:[eE][+-]?\d+)?|0x[0-9A-Fa-f]{4,16}\b")
ELEM = re.compile(r"(?<![\w%#@^!$.])(?:f16|f32|f64|bf16|i1|i8|i16|i32|i64|si8|si32|si64|ui8|index)(?![\w.])")
SSA = re.compile(r"%[A-Za-z0-9_.$-]+")
SSA_DEF = re.compile(r"(%[A-Za-z0-9_.$-]+)(?=(?:, %[A-Za-z0-9_.$-]+)*\s*=)|(%[A-Za-z0-9_.$-]+)(?=\s*:)")
TENSOR_DIMS = re.compile(r"tensor<((?:\d+x|\?x)*)")
VTENSOR_DIMS = re.compile(r"vtensor<\[([-\d, ]*)\]")
LAYOUT = re.compile(r"#spyre\.layout<device_size = \[([-\d, ]*)\], stride_map = \[([-\d, ]*)\]>")
NAMED_INTS = re.compile(r"\b(split|chunks|lx) <([^<>]*)>")
CORES = re.compile(r"cores \[([^\]]*)\]|cores ?= ?(\d+)")
HEX_BLOB = re.compile(r'"0x([0-9A-Fa-f]*)"')


def tokens(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in TOKEN.finditer(text)]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


# endregion
# region Values

INTERESTING_INTS = (
    0,
    1,
    -1,
    2,
    3,
    7,
    8,
    16,
    31,
    32,
    33,
    63,
    64,
    65,
    100,
    127,
    128,
    129,
    255,
    256,
    4095,
    4096,
    65536,
    2**31 - 1,
    2**31,
    2**32,
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**31),
)
SMALL_DIMS = (0, 1, 2, 3, 5, 7, 8, 16, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 192, 256)
INTERESTING_FLOATS = (
    "0.0",
    "-0.0",
    "1.0",
    "-1.0",
    "0.5",
    "1.0e+38",
    "-3.4e+38",
    "1.0e-40",
    "8.6e+09",
    "1.0e+10",
    "0x7FC00000",
    "0x7F800000",
    "0xFF800000",
    "6.5e+04",
)
ELEM_TYPES = ("f16", "f32", "f64", "bf16", "i1", "i8", "i32", "i64", "si32", "si64", "ui8", "index")
STICKS = (1, 16, 32, 63, 64, 65, 128)


def int_value(old: int, b: int) -> int:
    derived = (old + 1, old - 1, 2 * old, old // 2, -old, old * 64, old + 64, old + 128)
    pool = derived + INTERESTING_INTS
    return pool[b % len(pool)]


# endregion
# region Operators
# Each takes (text, a, b, corpus) and returns new text, or None where it finds no site.


def _pick(sites: list[Any], a: int) -> Any:
    return sites[a % len(sites)] if sites else None


def line_delete(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    lines = _lines(text)
    if len(lines) < 2:
        return None
    i = a % len(lines)
    n = 1 + b % 3
    return "".join(lines[:i] + lines[i + n :])


def line_duplicate(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    lines = _lines(text)
    if not lines:
        return None
    i, j = a % len(lines), b % len(lines)
    return "".join(lines[:j] + [lines[i]] + lines[j:])


def line_swap(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    lines = _lines(text)
    if len(lines) < 2:
        return None
    i, j = a % len(lines), b % len(lines)
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def line_splice(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """Insert a line of another (small) seed."""
    lines = _lines(text)
    donors = [s for s in corpus if not s.large]
    donor = _lines(donors[b % len(donors)].body)
    if not lines or not donor:
        return None
    return "".join(lines[: a % len(lines)] + [donor[(a // 7 + b) % len(donor)]] + lines[a % len(lines) :])


def token_delete(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    toks = tokens(text)
    if not toks:
        return None
    i = a % len(toks)
    j = min(len(toks) - 1, i + b % 3)
    return _splice(text, toks[i][0], toks[j][1], "")


def token_duplicate(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    toks = tokens(text)
    s, e = _pick(toks, a) or (0, 0)
    return _splice(text, e, e, " " + text[s:e]) if toks else None


def token_swap(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    toks = tokens(text)
    if len(toks) < 2:
        return None
    i = a % (len(toks) - 1)
    j = i + 1 if b % 2 else (b // 2) % len(toks)
    i, j = sorted((i, j))
    if i == j:
        return None
    (s1, e1), (s2, e2) = toks[i], toks[j]
    return text[:s1] + text[s2:e2] + text[e1:s2] + text[s1:e1] + text[e2:]


def token_replace(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """Replace a token by another token of the same text (same first character class when possible)."""
    toks = tokens(text)
    if not toks:
        return None
    s, e = toks[a % len(toks)]
    old = text[s:e]
    same = [t for t in toks if text[t[0]] == old[0] and text[t[0] : t[1]] != old]
    pool = same or toks
    s2, e2 = pool[b % len(pool)]
    return _splice(text, s, e, text[s2:e2])


def int_value_op(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    m = _pick(list(INT.finditer(text)), a)
    if m is None:
        return None
    return _splice(text, m.start(), m.end(), str(int_value(int(m.group()), b)))


def float_value(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    m = _pick(list(FLOAT.finditer(text)), a)
    if m is None:
        return None
    return _splice(text, m.start(), m.end(), INTERESTING_FLOATS[b % len(INTERESTING_FLOATS)])


def elem_type(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    m = _pick(list(ELEM.finditer(text)), a)
    if m is None:
        return None
    return _splice(text, m.start(), m.end(), ELEM_TYPES[b % len(ELEM_TYPES)])


def shape_dim(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """Change, drop or add one dim of a `tensor<AxBx..>` or `!torch.vtensor<[A,B],..>` shape."""
    sites = [(m, "x") for m in TENSOR_DIMS.finditer(text)] + [(m, ",") for m in VTENSOR_DIMS.finditer(text)]
    site = _pick(sites, a)
    if site is None:
        return None
    m, sep = site
    raw = m.group(1)
    dims = [d for d in (raw.rstrip("x").split("x") if sep == "x" else raw.split(",")) if d.strip()]
    how = b % 4
    k = (b // 4) % max(1, len(dims))
    new_dim = str(SMALL_DIMS[(b // 16) % len(SMALL_DIMS)])
    if how <= 1 and dims:
        dims[k] = new_dim
    elif how == 2 and dims:
        del dims[k]
    else:
        dims.insert(k, new_dim)
    new = "".join(d + "x" for d in dims) if sep == "x" else ",".join(dims)
    return _splice(text, m.start(1), m.end(1), new)


def layout(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """Change an entry of a #spyre.layout (the stick size too), swap, drop or add a dim, or
    copy another layout of the text over it; in one place, or wherever the layout occurs."""
    sites = list(LAYOUT.finditer(text))
    m = _pick(sites, a)
    if m is None:
        return None
    size = [int(v) for v in m.group(1).split(",") if v.strip()]
    strides = [int(v) for v in m.group(2).split(",") if v.strip()]
    how = b % 7
    k = (b // 7) % max(1, len(size))
    v = b // 49
    if how == 0 and size:
        size[k] = SMALL_DIMS[v % len(SMALL_DIMS)]
    elif how == 1 and strides:
        strides[k % len(strides)] = (
            (-1, 0, 1, 2, 64, 100, 128, 200, 256, 512, 4096)[v % 11] if v % 3 else strides[k % len(strides)] * 2
        )
    elif how == 2 and size:
        size[-1] = STICKS[v % len(STICKS)]  # the stick
    elif how == 3 and len(size) > 1:
        j = v % len(size)
        size[k], size[j] = size[j], size[k]
        if len(strides) == len(size):
            strides[k], strides[j] = strides[j], strides[k]
    elif how == 4 and len(size) > 1:
        del size[k]
        if k < len(strides):
            del strides[k]
    elif how == 5:
        size.insert(k, (1, 2, 3, 4)[v % 4])
        strides.insert(k, (-1, 1, 64, 128)[(v // 4) % 4])
    else:
        other = sites[v % len(sites)]
        return _splice(text, m.start(), m.end(), other.group())
    new = f"#spyre.layout<device_size = [{', '.join(map(str, size))}], stride_map = [{', '.join(map(str, strides))}]>"
    if (b // 7) % 2:  # every occurrence (the types stay consistent), or this one
        return text.replace(m.group(), new)
    return _splice(text, m.start(), m.end(), new)


def named_ints(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """split / chunks / lx plans: core splits, chunk counts and LX offsets (copy another
    offset: overlapping buffers; a stick up or down; half a stick: misaligned; the last stick of
    the default LX, its end, far past it)."""
    m = _pick(list(NAMED_INTS.finditer(text)), a)
    if m is None:
        return None
    items = [it.split("=") for it in m.group(2).split(",") if "=" in it]
    if not items:
        return None
    names = [k.strip() for k, _ in items]
    vals = [int(v) for _, v in items]
    k = (b % 8) % len(vals)
    how = (b // 8) % 6
    v = b // 48
    if m.group(1) == "lx":
        lx = DEFAULT_CONFIG.lx_bytes
        choices = (
            vals[v % len(vals)],
            vals[k] + STICK_BYTES,
            max(0, vals[k] - STICK_BYTES),
            vals[k] + STICK_BYTES // 2,
            lx - STICK_BYTES,
            lx,
            1 << 40,
        )
        vals[k] = choices[how % len(choices)] if how < 5 else choices[5 + v % 2]
    else:
        vals[k] = (0, 1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 33, 64, 1000)[(how * 7 + v) % 14]
    new = ", ".join(f"{n} = {x}" for n, x in zip(names, vals))
    return _splice(text, m.start(2), m.end(2), new)


def cores(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """The core set of a spyre_isa stream, or a target's `cores = N`."""
    m = _pick(list(CORES.finditer(text)), a)
    if m is None:
        return None
    if m.group(2) is not None:
        return _splice(text, m.start(2), m.end(2), str((0, 1, 2, 3, 5, 8, 16, 31, 32, 33, 64)[b % 11]))
    sets = (
        "0",
        "0 to 1",
        "0 to 3",
        "0 to 7",
        "0 to 31",
        "0 to 32",
        "1 to 31",
        "31",
        "32",
        "0 to 63",
        "3 to 0",
        "0, 0",
        "4, 2",
        "0 to 3, 2 to 5",
        "-1 to 3",
    )
    return _splice(text, m.start(1), m.end(1), sets[b % len(sets)])


def ssa_use(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """Replace one SSA name by another of the text (undefined, wrong type, use before def)."""
    uses = list(SSA.finditer(text))
    m = _pick(uses, a)
    if m is None:
        return None
    names = sorted({u.group() for u in uses})
    pool = names + ["%undefined", "%0", "%arg0"]
    return _splice(text, m.start(), m.end(), pool[b % len(pool)])


def ssa_def(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """Rename a definition to another name of the text (redefinition, dangling uses)."""
    defs = [m for m in SSA_DEF.finditer(text)]
    m = _pick(defs, a)
    if m is None:
        return None
    names = sorted({u.group() for u in SSA.finditer(text)})
    g = 1 if m.group(1) else 2
    return _splice(text, m.start(g), m.end(g), names[b % len(names)])


def truncate(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    toks = tokens(text)
    if not toks:
        return None
    return text[: toks[a % len(toks)][0]]


def resource(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """Corrupt a dense_resource blob: truncate it, drop its alignment header, or empty it."""
    m = _pick(list(HEX_BLOB.finditer(text)), a)
    if m is None:
        return None
    hexs = m.group(1)
    how = b % 4
    new = (hexs[: max(0, len(hexs) - 4 - 2 * (b // 4 % 8))], hexs[8:], "", hexs[:8] + "0")[how]
    return _splice(text, m.start(1), m.end(1), new)


def dim_global(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """One extent changed everywhere: every shape dim equal to d (torch and builtin tensor
    types) becomes d', and, for d >= 3, every `torch.constant.int d` (view sizes), so that
    the program stays consistent at another size (64 -> 65: not a whole stick)."""
    dims = [
        int(d) for m in VTENSOR_DIMS.finditer(text) for d in m.group(1).split(",") if d.strip().lstrip("-").isdigit()
    ]
    dims += [int(d) for m in TENSOR_DIMS.finditer(text) for d in m.group(1).rstrip("x").split("x") if d.isdigit()]
    dims = [d for d in dims if d > 1]
    if not dims:
        return None
    d = dims[a % len(dims)]
    new = (1, 2, 3, 5, 7, 31, 32, 33, 63, 65, 96, 127, 128, 129, 192, 2 * d, d + 1, d - 1, max(1, d // 2))[b % 19]
    if new == d:
        new = d + 1

    def vt(m: re.Match) -> str:
        return "vtensor<[" + ",".join(str(new) if p.strip() == str(d) else p for p in m.group(1).split(",")) + "]"

    def tt(m: re.Match) -> str:
        return "tensor<" + "".join(
            f"{new}x" if p == str(d) else f"{p}x" for p in m.group(1).rstrip("x").split("x") if p
        )

    text = VTENSOR_DIMS.sub(vt, text)
    text = TENSOR_DIMS.sub(lambda m: tt(m) if m.group(1) else m.group(0), text)
    if d >= 3 and (b // 19) % 2 == 0:
        text = re.sub(rf"(torch\.constant\.int ){d}\b", rf"\g<1>{new}", text)
    return text


def dtype_global(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """One element type changed in every torch tensor type (a model in f16, bf16, f64)."""
    found = sorted(set(re.findall(r"vtensor<\[[-\d, ?]*\],(\w+)>", text)))
    if not found:
        return None
    old = found[a % len(found)]
    new = ("f16", "bf16", "f64", "f32", "si64", "i1")[b % 6]
    return re.sub(rf"(vtensor<\[[-\d, ?]*\],){old}>", rf"\g<1>{new}>", text)


DEVICE_TYPE = re.compile(r"tensor<((?:\d+x)*)f16, (#spyre\.layout<[^>]*>)>")


def relayout(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """Every device tensor of one type put in another valid layout of its shape: the generic
    layout of a permutation of the shape read back through the inverse permutation (the stick
    on another dim, other device dim orders), or the generic or splat layout."""
    import itertools

    from spyre_mlir.layout import Layout

    sites = list(DEVICE_TYPE.finditer(text))
    m = _pick(sites, a)
    if m is None:
        return None
    shape = tuple(int(d) for d in m.group(1).rstrip("x").split("x") if d)
    candidates: list[Layout] = []
    for p in list(itertools.permutations(range(len(shape))))[:24]:
        inv = tuple(sorted(range(len(p)), key=lambda i: p[i]))
        candidates.append(Layout.generic(tuple(shape[i] for i in p), 2).permuted(inv))
    candidates += [Layout.generic(shape, 2)] + ([Layout.splat(shape, 2)] if shape and shape[-1] == 1 else [])
    texts = []
    for lay in candidates:
        try:
            lay.verify()
        except Exception:
            continue
        attr = f"#spyre.layout<device_size = [{', '.join(map(str, lay.device_size))}], stride_map = [{', '.join(map(str, lay.stride_map))}]>"
        if attr != m.group(2) and attr not in texts:
            texts.append(attr)
    if not texts:
        return None
    return text.replace(m.group(0), f"tensor<{m.group(1)}f16, {texts[b % len(texts)]}>")


def torch_const(text: str, a: int, b: int, corpus: tuple[Seed, ...]) -> str | None:
    """The value of a `torch.constant.int/float/bool` (dims, sizes, alphas, epsilons, flags)."""
    sites = list(re.finditer(r"torch\.constant\.(int|float|bool) (\S+)", text))
    m = _pick(sites, a)
    if m is None:
        return None
    kind, old = m.group(1), m.group(2)
    if kind == "int":
        new = str(int_value(int(old), b) if b % 3 else (-1, 0, 1, 2, 3, -2)[(b // 3) % 6])
    elif kind == "float":
        new = INTERESTING_FLOATS[b % len(INTERESTING_FLOATS)]
    else:
        new = ("true", "false")[b % 2]
    return _splice(text, m.start(2), m.end(2), new)


OPERATORS: dict[str, Callable[[str, int, int, tuple[Seed, ...]], str | None]] = {
    "line_delete": line_delete,
    "line_duplicate": line_duplicate,
    "line_swap": line_swap,
    "line_splice": line_splice,
    "token_delete": token_delete,
    "token_duplicate": token_duplicate,
    "token_swap": token_swap,
    "token_replace": token_replace,
    "int_value": int_value_op,
    "float_value": float_value,
    "elem_type": elem_type,
    "shape_dim": shape_dim,
    "layout": layout,
    "named_ints": named_ints,
    "cores": cores,
    "ssa_use": ssa_use,
    "ssa_def": ssa_def,
    "truncate": truncate,
    "resource": resource,
    "dim_global": dim_global,
    "dtype_global": dtype_global,
    "relayout": relayout,
    "torch_const": torch_const,
}
WEIGHTS = {
    "dim_global": 6,
    "dtype_global": 3,
    "relayout": 6,
    "torch_const": 6,
    "layout": 3,
    "named_ints": 4,
    "cores": 3,
    "int_value": 3,
    "float_value": 2,
}
"""How often Hypothesis draws each operator (default 1): the ones that keep a module
well-formed (consistent types) reach the pipeline and the device model more often."""
FALLBACK = ("int_value", "token_replace", "line_delete")
"""Tried in order when an operator finds no site, so every case is mutated."""

CORE_COUNTS = (1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64)


# endregion
# region Recipes


def apply_recipe(recipe: dict[str, Any]) -> tuple[Seed, str]:
    """The seed and the mutant text of a recipe (deterministic)."""
    corpus = load_seeds()
    seed = seed_named(recipe["seed"])
    body, res = seed.body, seed.resources
    for name, a, b in recipe["muts"]:
        a, b = _mix(a, 24), _mix(b, 24)
        if seed.large and name not in LARGE_OPERATORS:
            name = "token_replace"
        if name == "resource":
            new = resource(res, a, b, corpus)
            if new is not None:
                res = new
                continue
        for op in (name, *FALLBACK):
            new = OPERATORS[op](body, a, b, corpus)
            if new is not None and new != body:
                body = new
                break
    return seed, body + res


def recipe_strategy():
    """The Hypothesis strategy of recipes."""
    from hypothesis import strategies as st

    ops = [name for name in sorted(OPERATORS) for _ in range(WEIGHTS.get(name, 1))]
    mutation = st.tuples(st.sampled_from(ops), st.integers(0, (1 << 24) - 1), st.integers(0, (1 << 24) - 1))
    return st.fixed_dictionaries(
        {
            "muts": st.lists(mutation, min_size=1, max_size=2).map(lambda ms: [list(m) for m in ms]),
            "cores": st.one_of(st.none(), st.sampled_from(CORE_COUNTS)),
        }
    )


def draw_recipes(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """`n` recipes drawn by Hypothesis from a fixed seed (same n and seed: same recipes).

    Hypothesis runs an inner property over `recipe_strategy()` with generation only (no
    database, no shrinking); the property records each example."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from spyre_mlir.testing.hypothesis import load_every_module

    load_every_module()  # the same recipes whatever the caller has imported
    out: list[dict[str, Any]] = []

    @hseed(seed)
    @settings(
        max_examples=n,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        derandomize=False,
    )
    @given(recipe_strategy())
    def collect(recipe: dict[str, Any]) -> None:
        out.append(recipe)

    collect()
    return [{"seed": name, **r} for name, r in zip(seed_schedule(n, seed), out)]


# endregion
