"""The expectations file of the OpInfo conformance test (test/conformance/expectations.yaml):
for every OpInfo `opinfo.selected_opinfos` picks, what each of its samples does on the device,
as torch-spyre's `test_suite_config` states per op what its tests do. An entry is a group of
samples with their outcome, or a list of groups that together name each sample once:

    add: {on_device: [0, 1, 2, 3, 4]}
    sort: {fallback: [0, 1, 2, 3, 4], reason: "sort: no device lowering yet"}
    mean:
      - {on_device: [1, 2]}
      - {fallback: [0, 3, 4], reason: "sum: only one reduced dim, with keepdim=True"}

A sample whose outcome or reason differs from its entry fails the test, in either direction
(an op that now runs on the device fails until its entry says so), so the file cannot go
stale; `wrong` and `crash` are never expected. Reasons are the run's own (`reason_of`: the
fallback's or the refusal's message, shapes elided), written by `updated` when the test runs
with SPYRE_CONFORMANCE_ACCEPT=1.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spyre_mlir.testing.opinfo import EXPECTABLE, Outcome

HEADER = """\
# PyTorch's OpInfo samples on the native "spyre" device: what the first five float32 samples of
# each OpInfo do (spyre_mlir/testing/expectations.py says how to read an entry; docs/conformance.md
# is generated from this file). test/conformance/test_opinfo.py fails where a sample does
# otherwise, either way. After a change that moves samples, rewrite the entries of the ops run:
#   SPYRE_CONFORMANCE_ACCEPT=1 python -m pytest test/conformance -m full -p no:cacheprovider
"""


FILE = Path(__file__).resolve().parents[2] / "test" / "conformance" / "expectations.yaml"
"""The expectations file of the repository's conformance test."""

OBSERVED: dict[str, list[Outcome]] = {}
"""The outcomes of the ops a test run ran, by op, for SPYRE_CONFORMANCE_ACCEPT=1."""


@dataclass(frozen=True)
class Expected:
    kind: str
    reason: str = ""


Entry = dict[int, Expected]
"""An op's samples, each with its outcome."""


class ExpectationsError(ValueError):
    """A malformed entry: the message names the op."""


def load(path: Path) -> dict[str, Entry]:
    import yaml

    raw = yaml.safe_load(path.read_text()) or {}
    return {str(op): _entry(str(op), value) for op, value in raw.items()}


def _entry(op: str, value: Any) -> Entry:
    entry: Entry = {}
    for group in value if isinstance(value, list) else [value]:
        kinds = [k for k in group if k in EXPECTABLE] if isinstance(group, dict) else []
        if len(kinds) != 1 or not isinstance(group[kinds[0]], list) or set(group) - {kinds[0], "reason"}:
            raise ExpectationsError(f"{op}: a group is {{KIND: [samples], reason: TEXT}}, not {group!r}")
        kind = kinds[0]
        reason = group.get("reason") or ""
        if kind != "on_device" and not reason:
            raise ExpectationsError(f"{op}: a {kind} group needs its reason")
        for i in group[kind]:
            if i in entry:
                raise ExpectationsError(f"{op}: sample {i} is in two groups")
            entry[int(i)] = Expected(kind, reason)
    return entry


def reason_of(outcome: Outcome) -> str:
    """The reason an entry states for an outcome: its message without the op's IR type
    spelling, shapes and kernel names, which do not make another reason."""
    eager, _, rest = outcome.reason.partition(": ")
    inner = re.match(r"'torch\.aten\.(\w+)[\w.]*' producing .*? cannot run on the device: ", rest)
    if inner is not None:  # the op of the eager op's graph that the device refused
        rest = rest[inner.end() :]
        eager = eager if inner.group(1) == eager else f"{eager} ({inner.group(1)})"
    text = f"{eager}: {rest}" if rest else outcome.reason
    text = re.sub(r"!torch\.vtensor<\[[^\]]*\],(\w+)>", r"\1", text)
    text = re.sub(r"\(\d+(?:, \d+)*,?\)|\(\)", "(…)", text)
    text = re.sub(r"\bkernel g\d+_k\d+", "a kernel", text)  # graphs are numbered in the order a process compiles them
    text = text.removeprefix("spyre: ")
    text = text.split(" (it holds ")[0]
    return text[:160]


def mismatches(op: str, entry: Entry | None, outcomes: list[Outcome]) -> list[str]:
    """Every way the outcomes of an op's samples differ from its entry (empty: they agree)."""
    if entry is None:
        return [f"{op}: no entry in the expectations file (its samples: {_summary(outcomes)})"]
    problems = []
    for o in outcomes:
        want = entry.get(o.sample)
        got = stated(o)
        if o.kind in ("wrong", "crash"):
            problems.append(f"{op}[{o.sample}]: {o.kind}: {o.reason}")
        elif want is None:
            problems.append(f"{op}[{o.sample}]: no expectation for this sample; it is {got.kind}{_paren(got.reason)}")
        elif want != got:
            problems.append(
                f"{op}[{o.sample}]: expected {want.kind}{_paren(want.reason)}, got {got.kind}{_paren(got.reason)}"
            )
    ran = {o.sample for o in outcomes}
    problems += [f"{op}[{i}]: the entry names a sample the op does not have" for i in sorted(set(entry) - ran)]
    return problems


def stated(outcome: Outcome) -> Expected:
    return Expected(outcome.kind, "" if outcome.kind == "on_device" else reason_of(outcome))


def _paren(reason: str) -> str:
    return f" ({reason})" if reason else ""


def _summary(outcomes: list[Outcome]) -> str:
    return ", ".join(f"{o.sample}: {o.kind}{_paren(reason_of(o))}" for o in outcomes)


# region Writing


def render(entries: dict[str, Entry]) -> str:
    lines = [HEADER]
    for op, entry in entries.items():
        groups: dict[Expected, list[int]] = {}
        for i in sorted(entry):
            groups.setdefault(entry[i], []).append(i)
        texts = [
            f"{{{want.kind}: [{', '.join(map(str, samples))}]"
            + ("" if want.kind == "on_device" else f", reason: {_quoted(want.reason)}")
            + "}"
            for want, samples in groups.items()
        ]
        if len(texts) == 1:
            lines.append(f"{_yaml_key(op)}: {texts[0]}")
        else:
            lines.append(f"{_yaml_key(op)}:")
            lines += [f"  - {t}" for t in texts]
    return "\n".join(lines) + "\n"


def updated(entries: dict[str, Entry], observed: dict[str, list[Outcome]]) -> dict[str, Entry]:
    """`entries` with the ops in `observed` stated as they ran; a wrong or crashed sample keeps
    its old expectation (a failure to fix, not an outcome to accept)."""
    out = dict(entries)
    for op, outcomes in observed.items():
        old = entries.get(op, {})
        entry = {o.sample: stated(o) for o in outcomes if o.kind not in ("wrong", "crash")}
        entry.update({o.sample: old[o.sample] for o in outcomes if o.kind in ("wrong", "crash") and o.sample in old})
        if entry:
            out[op] = dict(sorted(entry.items()))
    return out


def _yaml_key(op: str) -> str:
    return op if re.fullmatch(r"[A-Za-z_][\w.\-]*", op) else _quoted(op)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# endregion


def counts(entries: dict[str, Entry]) -> Counter[str]:
    """Samples per outcome."""
    return Counter(e.kind for entry in entries.values() for e in entry.values())
