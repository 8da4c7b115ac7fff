"""Reachable states of each example's reference against its spec's `[state.bounds]`.

    python benchmarks/reachable_bounds.py [examples/pendulum ...] [--episodes 200] [--seed 0]

Plays the reference of each example (all of `examples/*` by default) for `--episodes`
episodes under each of these policies, reading the state before every step as L3 does:
- uniform: a fresh action from the action space each step;
- sticky: the previous action again with probability 0.9 (long pushes one way);
- bang-bang: only the extreme actions (a Box's low or high, a Discrete's first or last),
  switching with probability 0.05 per step;
- pump: the extreme action in the direction of the env's velocity (the energy-pumping
  controller of Pendulum, MountainCar, Acrobot, CartPole), for the examples that have one.
Prints, per example and policy, each bounded field's reached range per element and the share
of visited states outside the spec's bounds (counted as `envport verify` counts them), and
writes benchmarks/results/reachable_bounds.json.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.coverage.bounds import Coverage, ranges

ROOT = Path(__file__).resolve().parent.parent
# The observation component that is the velocity the pump policy follows, per example.
VELOCITY = {"pendulum": 2, "mountaincar": 1, "acrobot": 4, "cartpole": 1}
Policy = Callable[[np.ndarray, Any, np.random.Generator], Any]


def _extremes(space: spaces.Space) -> tuple[Any, Any]:
    if isinstance(space, spaces.Discrete):
        return int(space.start), int(space.start + space.n - 1)
    assert isinstance(space, spaces.Box)
    return space.low.copy(), space.high.copy()


def policies(example: str, space: spaces.Space) -> dict[str, Policy]:
    low, high = _extremes(space)

    def uniform(obs: np.ndarray, last: Any, rng: np.random.Generator) -> Any:
        return space.sample()

    def sticky(obs: np.ndarray, last: Any, rng: np.random.Generator) -> Any:
        return last if last is not None and rng.random() < 0.9 else space.sample()

    def bang_bang(obs: np.ndarray, last: Any, rng: np.random.Generator) -> Any:
        if last is None or rng.random() < 0.05:
            return low if rng.random() < 0.5 else high
        return last

    found: dict[str, Policy] = {"uniform": uniform, "sticky": sticky, "bang-bang": bang_bang}
    if example in VELOCITY:
        component = VELOCITY[example]

        def pump(obs: np.ndarray, last: Any, rng: np.random.Generator) -> Any:
            return high if obs[component] >= 0 else low

        found["pump"] = pump
    return found


def play(reference: Reference, policy: Policy, episodes: int, seed: int) -> Coverage:
    """The states before every step of `episodes` episodes, counted against the bounds."""
    coverage = Coverage.of(reference.spec)
    rng = np.random.default_rng(seed)
    reference.action_space.seed(seed)
    for episode in range(episodes):
        obs = reference.reset(seed + episode)
        states, last, done = [], None, False
        while not done:
            states.append(reference.read_state())
            last = policy(obs, last, rng)
            out = reference.step(last)
            obs, done = out.obs, out.terminated or out.truncated
        coverage.add({name: np.array([s[name] for s in states]) for name in states[0]}, 1)
    return coverage


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("examples", nargs="*", type=Path)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    examples = args.examples or sorted(p.parent for p in (ROOT / "examples").glob("*/envport.toml"))
    table = Table(
        title=escape(f"reachable states against [state.bounds] ({args.episodes} episodes each)")
    )
    for column in ("example", "policy", "states", "field", "bounds", "reached", "outside"):
        table.add_column(column)
    results: dict[str, Any] = {"episodes": args.episodes, "seed": args.seed, "examples": {}}
    for example in examples:
        spec = load_spec(example)
        reference = Reference(spec)
        found: dict[str, Any] = {}
        for name, policy in policies(example.name, reference.action_space).items():
            coverage = play(reference, policy, args.episodes, args.seed)
            found[name] = coverage.statistics()
            for field, count in coverage.fields.items():
                table.add_row(
                    example.name,
                    name,
                    str(coverage.states),
                    field,
                    ranges(count.low, count.high),
                    ranges(count.reached_low, count.reached_high),
                    f"{coverage.share(field):.2%}",
                )
        results["examples"][example.name] = found
        table.add_section()
    Console(width=200).print(table)
    out = ROOT / "benchmarks" / "results" / "reachable_bounds.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
