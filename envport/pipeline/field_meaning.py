"""What a state field's values mean, from the spec's `[state.describe]`.

A bridged field reaches the prompt as its measured type alone (`int64 array`): card codes,
the value meaning "no card yet", which end of a deck is dealt, what a counter counts are in
the user's bridge and nowhere the model can read. The spec says them once, per field or per
group of fields (`hand` for `hand.player` and `hand.dealer`); the prompt shows each beside
its field, and `envport check` names the bridged fields that have none.
"""

from __future__ import annotations

from collections.abc import Iterable

from envport.errors import SpecError
from envport.pipeline.observed import ObservedTypes
from envport.spec import PortSpec
from envport.structure import LENGTH_SUFFIX


def describe(spec: PortSpec, name: str) -> str | None:
    """The description of a field: its own, else its nearest group's; a list's length leaf
    says what it counts."""
    table = spec.state.describe
    if name.endswith(LENGTH_SUFFIX):
        return f"how many items of `{name[: -len(LENGTH_SUFFIX)]}` are in use"
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        found = table.get(".".join(parts[:end]))
        if found:
            return found
    return None


def field_descriptions(spec: PortSpec, observed: ObservedTypes | None) -> dict[str, str]:
    """Field name -> what its values mean, for the fields the prompt lists."""
    if not spec.state.describe:
        return {}
    names = [name for name, _ in observed.fields] if observed else list(spec.state.describe)
    return {name: text for name in names if (text := describe(spec, name))}


def check_descriptions(spec: PortSpec, names: Iterable[str]) -> list[str]:
    """`envport check`'s line on descriptions; a SpecError for one naming no field."""
    names = list(names)
    groups = {".".join(n.split(".")[:end]) for n in names for end in range(1, n.count(".") + 2)}
    unknown = sorted(set(spec.state.describe) - groups)
    if unknown:
        raise SpecError(
            f"key `state.describe.{unknown[0]}`: no state field or group of fields is called "
            f"that; the state reads {', '.join(names)}"
        )
    if spec.state.read is None:
        return []  # attribute paths name what they read; a bridge's fields say nothing
    missing = [n for n in names if describe(spec, n) is None]
    if not missing:
        return ["describe: every bridged field says what its values mean"]
    return [
        f"warn describe: bridged fields without a description: {', '.join(missing)}; the "
        "prompt shows only their types: say what their values mean in [state.describe] "
        "(codes, the value meaning none, units, order)"
    ]
