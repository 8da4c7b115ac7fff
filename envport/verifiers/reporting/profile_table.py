"""`verify -v`: the run's profile as a table after the verdict, one row per check.

Read from the report's `profile` (the same data `--json` writes), so the table says nothing
the JSON does not. Phases are exclusive: a check's row adds up to its wall time.
"""

from __future__ import annotations

from typing import Any

from envport.io.profile import PHASES

# Column heads nine wide: the reference's calls made under coverage's tracer are their own.
HEADS = {"reference_traced": "ref+trace"}


def _bytes(count: int) -> str:
    for unit in ("B", "kB", "MB"):
        if count < 1000:
            return f"{count:.0f} {unit}"
        count = count // 1000
    return f"{count} GB"


def profile_lines(profile: dict[str, Any]) -> list[str]:
    """The table: a header, a row per check (seconds per phase), then under each check
    its requests to the port worker by op."""
    if not profile:
        return []
    extra = sorted({p for section in profile.values() for p in section["phases"]} - set(PHASES))
    phases = [*PHASES, *extra]
    width = max(len(name) for name in [*profile, "check"])
    header = f"{'check':<{width}} {'wall s':>8} " + " ".join(
        f"{HEADS.get(p, p)[:9]:>9}" for p in phases
    )
    lines = ["where the time went (seconds; phases exclusive):", header]
    for name, section in profile.items():
        cells = " ".join(f"{section['phases'].get(p, 0.0):>9.2f}" for p in phases)
        lines.append(f"{name:<{width}} {section['seconds']:>8.2f} {cells}")
        for op, asked in section["requests"].items():
            first = asked["first_seconds"]
            first_text = f", first {first:.2f} s" if first is not None else ""
            lines.append(
                f"{'':<{width}}   {op}: {asked['count']} requests, {asked['seconds']:.2f} s"
                f"{first_text}; sent {_bytes(asked['sent_bytes'])}, "
                f"received {_bytes(asked['received_bytes'])}"
            )
        for part, seconds in section.get("port_reported", {}).items():
            lines.append(f"{'':<{width}}   the port's own {part}: {seconds:.2f} s")
    return lines
