"""A replay: the `envport verify` run that shows one divergence again.

A replay is data (the spec, the port and the options of that run) and is rendered to a
command line for people to copy. The self-check runs the options it holds; nothing parses a
command line back.
"""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass
from typing import Any, Literal

from envport.verifiers.options import VerifyOptions

# What a replay re-runs: one level, the proposed cases, or a reverse-injection rollout.
Kind = Literal["l1", "l2", "l3", "l4", "cases", "reverse"]


@dataclass(frozen=True)
class Replay:
    kind: Kind
    spec: str
    port: str
    options: VerifyOptions
    # False when the target lists no modules (a one-module bridge): no `--module` to give.
    names_module: bool = True

    def at(
        self,
        *,
        module: str | None = None,
        mode: str | None = None,
        episode: int | None = None,
        batch: tuple[int, int] | None = None,
    ) -> Replay:
        """This replay narrowed to one case: an L1 module, an L3 mode and episode (or the
        batch of episodes it was played with). What a kind's command line cannot say is left
        as it is: a proposed case's replay runs every case, whatever episode diverged."""
        changes: dict[str, Any] = {}
        if module is not None and self.kind == "l1" and self.names_module:
            changes["module"] = module
        if mode is not None and self.kind in ("l3", "reverse"):
            changes["mode"] = mode
        # A reverse-injection replay runs every episode: one batched reset starts them all.
        if episode is not None and self.kind == "l3":
            changes["only_episode"], changes["episode_batch"] = episode, None
        if batch is not None and self.kind == "l3":
            changes["only_episode"], changes["episode_batch"] = None, batch
        return dataclasses.replace(self, options=dataclasses.replace(self.options, **changes))

    def command(self) -> str:
        """The command line that runs this replay, as `envport verify` reads it."""
        o = self.options
        words = ["envport", "verify", self.spec, "--port", self.port]
        if o.reverse:
            words.append("--reverse-injection")
        if o.target != "auto":
            words += ["--target", o.target]
        words += ["--seed", str(o.seed)]
        if self.kind in ("l1", "l2"):
            words += ["--levels", self.kind]
            if o.examples is not None:
                words += ["--examples", str(o.examples)]
            if not o.shrink:
                words.append("--no-shrink")
            return shlex.join(words) + (f" --module {o.module}" if o.module is not None else "")
        if self.kind == "l4":
            return shlex.join([*words, "--levels", "l4"])
        if self.kind == "cases":
            line = shlex.join([*words, "--levels", "l3", "--cases", str(o.cases)])
            return line + " --episodes 1" + _explore(o)
        words += ["--levels", "l3", "--episodes", str(o.episodes), "--steps", str(o.steps)]
        # A replay not narrowed to a mode or an episode (a check whose port raised before
        # it could say where) runs them all.
        line = shlex.join(words) + (f" --mode {o.mode}" if o.mode else "") + _explore(o)
        if self.kind == "reverse":  # one batched reset starts every episode: all run again
            return line
        batch = o.episode_batch
        if batch is not None:
            return line + f" --episode {batch[0]}-{batch[1]}"
        return line + ("" if o.only_episode is None else f" --episode {o.only_episode}")


def _explore(options: VerifyOptions) -> str:
    """`--explore-steps N` when the replay sets it (a cases replay: the rollouts l3.explore
    kept are what to see again, with no new exploration beside them)."""
    return "" if options.explore_steps is None else f" --explore-steps {options.explore_steps}"


def replays(
    spec: str, port: str, options: VerifyOptions, episodes: int, steps: int, split: bool
) -> dict[Kind, Replay]:
    """Each level's replay of a run with `options`: the options a command line would give,
    before a level narrows it to its case (`Replay.at`)."""
    base = VerifyOptions(target=options.target, seed=options.seed, reverse=options.reverse)
    drawn = dataclasses.replace(base, examples=options.examples, shrink=options.shrink)
    rollouts = dataclasses.replace(base, levels=("l3",), episodes=episodes, steps=steps)
    cases = dataclasses.replace(
        base, levels=("l3",), cases=options.cases, episodes=1, explore_steps=0
    )
    return {
        "l1": Replay("l1", spec, port, dataclasses.replace(drawn, levels=("l1",)), split),
        "l2": Replay("l2", spec, port, dataclasses.replace(drawn, levels=("l2",))),
        "l4": Replay("l4", spec, port, dataclasses.replace(base, levels=("l4",))),
        "cases": Replay("cases", spec, port, cases),
        "l3": Replay("l3", spec, port, rollouts),
        "reverse": Replay("reverse", spec, port, rollouts),
    }
