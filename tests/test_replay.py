"""Replays are data rendered to the command line `envport verify` reads; never parsed back."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

from envport.cli import build_parser, verify_options
from envport.verifiers.options import VerifyOptions
from envport.verifiers.reporting.replay import replays

OPTIONS = VerifyOptions(target="numpy", seed=3, examples=7, shrink=False, cases=Path("c d"))


def lines(options: VerifyOptions = OPTIONS, split: bool = True) -> dict[str, str]:
    made = replays("ex/spec", "ports/my port", options, 40, 200, split)
    return {
        "l1": made["l1"].at(module="physics").command(),
        "l2": made["l2"].command(),
        "l3": made["l3"].at(mode="free", episode=5).command(),
        "batch": made["l3"].at(mode="resync", batch=(4, 9)).command(),
        "l4": made["l4"].command(),
        "cases": made["cases"].at(mode="free", episode=2).command(),
        "reverse": made["reverse"].at(mode="free", episode=5).command(),
    }


def test_each_kind_renders_the_command_line_it_always_had() -> None:
    base = "envport verify ex/spec --port 'ports/my port' --target numpy --seed 3"
    rollouts = f"{base} --levels l3 --episodes 40 --steps 200"
    assert lines() == {
        "l1": f"{base} --levels l1 --examples 7 --no-shrink --module physics",
        "l2": f"{base} --levels l2 --examples 7 --no-shrink",
        "l3": f"{rollouts} --mode free --episode 5",
        "batch": f"{rollouts} --mode resync --episode 4-9",
        "l4": f"{base} --levels l4",
        "cases": f"{base} --levels l3 --cases 'c d' --episodes 1 --explore-steps 0",
        "reverse": f"{rollouts} --mode free",
    }


def test_a_target_without_modules_gives_no_module_and_reverse_says_so() -> None:
    options = VerifyOptions(reverse=True)
    made = lines(options, split=False)
    assert made["l1"] == "envport verify ex/spec --port 'ports/my port' --reverse-injection " + (
        "--seed 0 --levels l1"
    )
    assert made["reverse"].endswith(
        "--reverse-injection --seed 0 --levels l3 --episodes 40 --steps 200 --mode free"
    )


def test_the_options_a_replay_runs_are_those_its_line_gives() -> None:
    """What the self-check runs (the data) and what a person runs (the line) agree."""
    made = replays("ex/spec", "ports/my port", OPTIONS, 40, 200, True)
    for replay in (
        made["l1"].at(module="physics"),
        made["l2"],
        made["l3"].at(mode="free", episode=5),
        made["l3"].at(mode="resync", batch=(4, 9)),
        made["l4"],
        made["cases"].at(mode="free", episode=2),
        dataclasses.replace(made["reverse"].at(mode="free"), port="p"),
    ):
        args = build_parser().parse_args(shlex.split(replay.command())[1:])
        assert (args.spec, args.port) == (replay.spec, replay.port)
        assert verify_options(args) == replay.options
