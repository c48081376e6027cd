"""The device a module is compiled for, as IR: `#spyre.target<...>`, the module's `spyre.target`.

`spyre_mlir.target.config.DeviceConfig` is the device as data; this attribute is its IR form
(as MLIR's `#nvvm.target` and `dlti.target_system_spec` are), one entry per DeviceConfig field,
so every pass reads the same description from the module and a test states its device in
its input:

    builtin.module attributes {spyre.target = #spyre.target<cores = 8, lx_bytes = 1048576>} { ... }

Printed, a field at DeviceConfig's default is left out (`#spyre.target` is the default
device); parsed, a field left out takes that default. The attribute holds every field, so
`TargetAttr(config).config == config`. Its verifier checks each value's kind against the
field's and the whole against `DeviceConfig.validate`.

The pipeline attaches the device it compiles for (spyre_mlir/pipeline.py). A pass that reads
the target of a module without one (`module_target`) attaches the default target, so its
output states the device it assumed.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import (
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.target.config import DeviceConfig

TARGET_ATTR = "spyre.target"
"""The module attribute that names the device the module is compiled for (a `#spyre.target`)."""

Scalar = bool | int | float | str

_DEFAULTS: dict[str, Scalar] = {f.name: getattr(DeviceConfig(), f.name) for f in dataclasses.fields(DeviceConfig)}
"""Every DeviceConfig field and its default, in declaration order; a field's kind is its default's type."""


def _kind(name: str) -> type:
    return type(_DEFAULTS[name])


def _entry(name: str, value: object) -> Attribute:
    """The attribute of one field's value (ValueError when it is not of the field's kind)."""
    kind = _kind(name)
    if kind is bool and isinstance(value, bool):
        return IntegerAttr(int(value), i1)
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return IntegerAttr(value, i64)
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return FloatAttr(float(value), f64)
    if kind is str and isinstance(value, str):
        return StringAttr(value)
    raise ValueError(f"device parameter {name}: expected {kind.__name__}, got {value!r}")


def _value(name: str, attr: Attribute) -> Scalar:
    """One field's value from its attribute (VerifyException when it is not of the field's kind)."""
    kind = _kind(name)
    if kind is bool and isinstance(attr, IntegerAttr) and attr.type == i1:
        return bool(attr.value.data)
    if kind is int and isinstance(attr, IntegerAttr) and attr.type == i64:
        return attr.value.data
    if kind is float and isinstance(attr, FloatAttr) and attr.type == f64:
        return attr.value.data
    if kind is str and isinstance(attr, StringAttr):
        return attr.data
    raise VerifyException(f"#spyre.target: {name} holds {kind.__name__}, got {attr}")


def _float_text(v: float) -> str:
    """A float as an MLIR float literal (which needs a '.'), exactly: `1.0e-06`, `204800000000.0`."""
    text = repr(v)
    return text.replace("e", ".0e") if "e" in text and "." not in text else text


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """`#spyre.target<cores = 8, ddr_bytes_per_s = 128000000000.0, numerics = "ieee-fp16">`:
    the device a module is compiled for, one entry per `DeviceConfig` field (module docstring);
    the fields at their defaults are not printed."""

    name = "spyre.target"
    entries: DictionaryAttr

    def __init__(self, config: DeviceConfig | Mapping[str, Scalar] = DeviceConfig()):
        values = dataclasses.asdict(config) if isinstance(config, DeviceConfig) else dict(config)
        unknown = sorted(set(values) - set(_DEFAULTS))
        if unknown:
            raise ValueError(f"unknown device parameter(s) {unknown}; known: {', '.join(_DEFAULTS)}")
        super().__init__(DictionaryAttr({k: _entry(k, values.get(k, d)) for k, d in _DEFAULTS.items()}))

    @property
    def config(self) -> DeviceConfig:
        """The DeviceConfig this attribute describes."""
        return _config(self)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: dict[str, Scalar] = {}

        def entry() -> None:
            pos = parser.pos
            key = parser.parse_identifier()
            if key not in _DEFAULTS:
                parser.raise_error(f"unknown device parameter {key!r}; known: {', '.join(_DEFAULTS)}", pos, parser.pos)
            if key in values:
                parser.raise_error(f"device parameter {key} given twice", pos, parser.pos)
            parser.parse_punctuation("=")
            kind = _kind(key)
            at = parser.pos
            value: Scalar
            if kind is bool:
                value = parser.parse_boolean(f" for {key}")
            elif kind is str:
                value = parser.parse_str_literal(f" for {key}")
            elif kind is int:
                value = parser.parse_integer(allow_boolean=False, context_msg=f" for {key}")
            else:
                value = float(parser.parse_number(context_msg=f" for {key}"))
            try:
                _entry(key, value)
            except ValueError as e:
                parser.raise_error(str(e), at, parser.pos)
            values[key] = value

        start = parser.pos
        if parser.parse_optional_punctuation("<") is not None:
            if parser.parse_optional_punctuation(">") is None:
                parser.parse_comma_separated_list(parser.Delimiter.NONE, entry)
                parser.parse_punctuation(">")
        try:
            return (TargetAttr(values).entries,)
        except VerifyException as e:  # a device DeviceConfig.validate refuses: at the attribute
            parser.raise_error(str(e), start, parser.pos)

    def print_parameters(self, printer: Printer) -> None:
        shown = []
        for key, default in _DEFAULTS.items():
            attr = self.entries.data.get(key)
            if attr is None:
                continue
            try:
                value = _value(key, attr)
            except VerifyException:  # printed as it is (an unverified attribute)
                shown.append(f"{key} = {attr}")
                continue
            if value == default and type(value) is type(default):
                continue
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, float):
                text = _float_text(value)
            elif isinstance(value, str):
                text = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
            else:
                text = str(value)
            shown.append(f"{key} = {text}")
        if shown:
            printer.print_string("<" + ", ".join(shown) + ">")

    def verify(self) -> None:
        keys = set(self.entries.data)
        if keys != set(_DEFAULTS):
            missing, extra = sorted(set(_DEFAULTS) - keys), sorted(keys - set(_DEFAULTS))
            raise VerifyException(
                f"#spyre.target: needs one entry per DeviceConfig field (missing {missing}, unknown {extra})"
            )
        values = {k: _value(k, a) for k, a in self.entries.data.items()}
        try:
            DeviceConfig(**values).validate()  # type: ignore[arg-type]  # each value is of its field's kind
        except ValueError as e:
            raise VerifyException(f"#spyre.target: {e}") from None


@functools.lru_cache(maxsize=64)
def _config(attr: TargetAttr) -> DeviceConfig:
    return DeviceConfig(**{k: _value(k, a) for k, a in attr.entries.data.items()})  # type: ignore[arg-type]


def module_target(module: ModuleOp) -> DeviceConfig:
    """The device `module` is compiled for: its `spyre.target`. A module without one is given
    the default target (`#spyre.target`, DeviceConfig()), which its printed form then shows:
    a pass run on its own plans for the default device and says so in its output."""
    attr = module.attributes.get(TARGET_ATTR)
    if attr is None:
        attr = module.attributes[TARGET_ATTR] = TargetAttr()
    if not isinstance(attr, TargetAttr):
        raise VerifyException(f"module attribute {TARGET_ATTR} must be a #spyre.target, got {attr}")
    return attr.config


def set_module_target(module: ModuleOp, config: DeviceConfig) -> None:
    """Attach `config` as the device `module` is compiled for (its `spyre.target`)."""
    module.attributes[TARGET_ATTR] = TargetAttr(config)
