"""`envport init ENV [--out DIR] [--target jax|numpy] [--force]`: infer a spec."""

from __future__ import annotations

import argparse
from pathlib import Path

from envport.errors import EXIT_OK


def _budget(text: str) -> tuple[int, int]:
    episodes, _, steps = text.partition(",")
    return int(episodes), int(steps)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "init",
        help="infer a spec (envport.toml) for a Gymnasium id or package.module:factory",
        description="Infer a spec for ENV: reference sources, state fields (proven by a "
        "round trip), randomness, observation names, reachable-state bounds, tolerances "
        "and levels. Exit 2 with one line when something must be written by hand.",
    )
    parser.add_argument(
        "env",
        help="`gymnasium:CartPole-v1`, a registered id `CartPole-v1`, or `package.module:factory`",
    )
    parser.add_argument("--out", type=Path, help="directory for envport.toml (default ./<name>)")
    parser.add_argument(
        "--target", choices=("jax", "numpy"), help="the one target to list (default both)"
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing spec")
    # Tests play fewer episodes: EPISODES,STEPS (not for users: smaller is less sure).
    parser.add_argument("--budget", type=_budget, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from envport.init import Budget, write_spec
    from envport.init.entry import parse_env

    out = args.out
    if out is None:
        out = Path(parse_env(args.env).name)
    budget = Budget()
    if args.budget is not None:
        episodes, steps = args.budget
        budget = Budget(
            episodes=episodes,
            steps=steps,
            starts=max(10, episodes // 3),
            chaos=max(6, episodes // 5),
        )
    path = write_spec(args.env, out, args.target, force=args.force, budget=budget)
    print(path)
    return EXIT_OK
