"""A small structural type check for parsed JSON: ``check(value, spec, where, field)``.

A spec is a Python type (``str``, ``int``, ``float``, ``bool``, ``dict``, ``list``) or ``list[T]`` /
``dict[str, T]``; ``int`` excludes ``bool``, ``float`` accepts ints and rejects NaN/inf. A mismatch
raises one ``UserError`` naming where and the field path.
"""

from __future__ import annotations

import math
import typing
from typing import Any

from framebench.errors import UserError

_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
          dict: "an object", list: "a list"}


def describe(spec: Any) -> str:
    origin = typing.get_origin(spec)
    if origin is list:
        return f"a list of {describe(typing.get_args(spec)[0]).removeprefix('a ').removeprefix('an ')}s"
    if origin is dict:
        return f"an object of {describe(typing.get_args(spec)[1]).removeprefix('a ').removeprefix('an ')}s"
    return _NAMES.get(spec, getattr(spec, "__name__", str(spec)))


def matches(value: Any, spec: Any) -> bool:
    origin = typing.get_origin(spec)
    if origin is list:
        (inner,) = typing.get_args(spec)
        return isinstance(value, list) and all(matches(v, inner) for v in value)
    if origin is dict:
        key, inner = typing.get_args(spec)
        return isinstance(value, dict) and all(matches(k, key) and matches(v, inner) for k, v in value.items())
    if spec is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if spec is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, spec)


def check(value: Any, spec: Any, where: str, field: str) -> Any:
    if not matches(value, spec):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise UserError(f"{where}: field '{field}' must be {describe(spec)}, got {shown}")
    return value


def check_fields(data: dict[str, Any], specs: dict[str, Any], where: str, optional: tuple[str, ...] = (),
                 allow_extra: bool = False) -> None:
    """Every key of ``specs`` present (unless optional) with its type; unknown keys rejected."""
    for name, spec in specs.items():
        if name not in data:
            if name in optional:
                continue
            raise UserError(f"{where}: missing field '{name}'")
        check(data[name], spec, where, name)
    if not allow_extra:
        extra = sorted(set(data) - set(specs))
        if extra:
            raise UserError(f"{where}: unknown field '{extra[0]}'")
