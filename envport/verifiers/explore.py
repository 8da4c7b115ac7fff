"""l3.explore: play the reference toward the branches no level reached, then compare the
port there.

L1 draws states independently and L3 plays from resets, so a rule that lives deep in play
(Breakout refills the board when its last brick goes) is reached by neither. The reference
can load states, so it explores (after Go-Explore): an archive of reached states keyed by a
coarse cell of the state's declared structure (`CellKeys`, coverage/cells.py: its level,
what each collection or grid holds and the step counter by eighths of the time limit; its
place, where each small field's components lie), each cell keeping the state reached with
the highest return. Each round picks a level (rarely picked ones, those whose rollouts found
new code, and those reached later first), then a cell of it, loads its state and plays a
rollout (uniform actions, sticky half the time, or the spec's own `[levels.l3] policy`). A
rollout that takes code of the reference no check had taken is kept: the port plays it from
the same state with the same actions, compared step by step as L3's free play (its start
state is one the reference reached in play, so one the port's `can_hold` refuses is a
divergence). The budget is reference steps (`[coverage] explore_steps`), so a seed replays
it; the search stops early when half of it passes with neither new code nor a new level, or
two thousand rollouts in a row take no new code.

A divergence's replay line runs the kept rollouts again as proposed cases (a TOML file of
start states and actions under envport's cache), without exploring.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from envport.cache_home import cache_home
from envport.io.atomic import write_atomically
from envport.spec import PortSpec
from envport.targets.reference import Reference, State, import_attr
from envport.verifiers.context import VerifyContext
from envport.verifiers.coverage.branches import Measure, analyse
from envport.verifiers.coverage.cells import CellKeys
from envport.verifiers.coverage.conditions import ConditionMeasure
from envport.verifiers.draws.policies import EpisodePlan, uniform_actions
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.levels.l3.cases import MAX_ACTIONS, cases_text, held_starts
from envport.verifiers.levels.l3.played import Played
from envport.verifiers.levels.l3.rollout import KEEP_DIVERGENCES
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.divergence import Divergence, LevelResult

# Reference resets the archive starts from.
ROOTS = 8
# How much more often the level reached last is picked than the first one (other things
# equal): deep play builds on the deepest states reached so far.
FRONTIER = 16.0
# The search stops early when this share of its budget passed with neither new code nor a
# new level reached: what is still missed is then likely out of reach (a spec's
# `out_of_scope` says why), and a slow reference does not pay the whole budget for it.
PATIENCE = 0.5
# It also stops after this many rollouts in a row with no new code, new levels or not:
# rollouts that end at once (a game's uniform move is nearly always illegal, and an illegal
# move ends it) cost a reset, a state load and a coverage read each, and in chess the odd
# legal move among them reached a new level every few hundred rollouts, so counting levels
# kept 13,000 one-step rollouts going that found nothing. The longest run of rollouts
# between two new arcs seen in MinAtar Breakout (the refill) was about 1,000: half this.
ROLLOUT_PATIENCE = 2000
# The exploration's own stream of the run's seed, apart from L3's episodes.
STREAM = 0xE7


@dataclass
class Cell:
    state: State
    score: float  # the return on the way to it, from its root
    chosen: int = 0
    seen: int = 0
    found: int = 0  # rollouts from it that took a new branch exit


@dataclass
class Level:
    """A level's cells, and their picks and finds summed as they happen: a pick weighs
    every level by them, and summing them afresh each time cost more than the rollouts'
    own bookkeeping (7.7 million terms in Seaquest's 675 picks)."""

    cells: list[Cell]
    chosen: int = 0
    found: int = 0


def budget(ctx: VerifyContext) -> int:
    """Reference steps to explore: `--explore-steps`, else the spec's."""
    given = ctx.options.explore_steps
    return ctx.spec.coverage.explore_steps if given is None else given


def applies(ctx: VerifyContext) -> bool:
    measure = ctx.branches
    if measure is None or budget(ctx) == 0 or ctx.options.reverse:
        return False
    if measure.not_measured:
        return False  # what a level played unmeasured (on Ray) may have taken the branches
    conditions = ctx.conditions
    if conditions is not None and conditions.broken is None and conditions.analyse().missed:
        return True  # conditions never seen together: explored toward like branches
    return bool(analyse(measure, ctx.spec).missed)


def found(rollouts: int, exits: int, combinations: int = 0) -> str:
    """What the search found, worded beside the coverage lines it is part of: their figures
    already count these (the search runs before they are taken), so they are the ones
    exploration added to the levels' before it, not ones still missing."""
    if not rollouts:
        return "no rollout took a branch exit of the reference's code the levels before it had not"
    what = [f"{exits} branch exit{'s' if exits != 1 else ''}"] if exits else []
    if combinations:
        what.append(f"{combinations} combination{'s' if combinations != 1 else ''} of conditions")
    return (
        f"{rollouts} rollout{'s' if rollouts != 1 else ''} took {' and '.join(what)} of the "
        "reference's code the levels before it had not (counted in the coverage lines)"
    )


def run_explore(ctx: VerifyContext) -> LevelResult:
    measure = ctx.branches
    assert measure is not None
    spec, reference = ctx.spec, ctx.reference
    search = Search(spec, reference, measure, ctx.options.seed, ctx.conditions)
    kept = search.run(budget(ctx), spec.coverage.explore_horizon)
    stopped = (
        f" (stopped: nothing new in the last half of the budget, or no new code in"
        f" {ROLLOUT_PATIENCE} rollouts)"
        if search.stalled
        else ""
    )
    note = (
        f"{search.steps} reference steps in {search.rollouts} rollouts{stopped} from "
        f"{len(search.archive)} cells: "
        + found(len(kept), search.new_exits, search.new_combinations)
    )
    if not kept:
        level = LevelResult(level="l3", mode="explore", passed=True, episodes=0)
        level.note = note
        return level
    played = Played.join(kept)
    # Every start state is one the reference reached in play: the port must hold each, and
    # one its `can_hold` refuses is a divergence of its own, not played.
    held = held_starts(ctx.worker, kept)
    level = _compared(ctx, [p for p, holds in zip(kept, held, strict=True) if holds])
    replay = ctx.replays["cases"]
    refused = [index for index, holds in enumerate(held) if not holds]
    for index in refused[: max(0, KEEP_DIVERGENCES - len(level.divergences))]:
        level.divergences.append(_unheld(played, index, len(refused)))
    level.passed = level.passed and not refused
    level.diverged_episodes += len(refused)
    if level.divergences:
        # The replay runs the kept rollouts as proposed cases (with no new exploration),
        # written down only when there is a divergence to show again.
        cases = _write_cases(spec, played, ctx.options.seed)
        options_with = dataclasses.replace(replay.options, cases=cases)
        replay = dataclasses.replace(replay, options=options_with)
    for divergence in level.divergences:
        divergence.mode = "explore"
        divergence.replay = replay.command()
        divergence.replay_of = replay
        reached = search.reached.get(divergence.episode or 0) or ["a branch no level reached"]
        divergence.message = (
            f"explored rollout {divergence.episode} ({'; '.join(reached)}): " + divergence.message
        )
    level.note = note
    return level


def _compared(ctx: VerifyContext, kept: list[Played]) -> LevelResult:
    """The kept rollouts the port holds, played from their start states and compared."""
    if not kept:
        return LevelResult(level="l3", mode="explore", passed=True, episodes=0)
    played = Played.join(kept)
    result = ctx.worker.request(l3.free_request(played))
    options = L3Options(episodes=len(played), steps=MAX_ACTIONS, mode="free")
    level = l3.judge(ctx.spec, played, result, "free", options, ctx.replays["cases"])
    level.mode = "explore"
    return level


def _unheld(played: Played, index: int, refused: int) -> Divergence:
    start = played.starts[index]
    return Divergence(
        level="l3",
        mode="explore",
        episode=played.plans[index].index,
        start_state={k: np.asarray(v[start]).tolist() for k, v in played.states.items()},
        message=f"the port cannot hold its start state (`can_hold` refused {refused} of "
        f"{len(played)} start states the reference reached in play; a port must hold every one)",
    )


class Search:
    """The archive and the rollouts: deterministic for a seed and a budget."""

    def __init__(
        self,
        spec: PortSpec,
        reference: Reference,
        measure: Measure,
        seed: int,
        conditions: ConditionMeasure | None = None,
    ) -> None:
        self.spec, self.reference, self.measure = spec, reference, measure
        self.conditions = conditions
        # Per kept rollout, the conditions and pairs it was the first to show.
        self.reached: dict[int, list[str]] = {}
        self.rng = np.random.default_rng([seed, STREAM])
        self.seed = seed
        self.archive: dict[tuple[Any, Any], Cell] = {}
        # The archive's cells by level, levels in the order first reached.
        self.levels: dict[Any, Level] = {}
        self.steps = 0
        self.rollouts = 0
        self.new_exits = 0
        self.new_combinations = 0
        self.stalled = False
        self.space = reference.env.action_space
        self.limit = reference.max_episode_steps
        self.cell_of = CellKeys(spec, self.limit)
        policy = spec.levels.l3.policy
        self.policy = import_attr(policy, "levels.l3.policy", spec) if policy else None

    def _known(self) -> tuple[int, set[str]]:
        """Arcs taken, and conditions and pairs shown (in words): what a rollout is new by."""
        shown = set() if self.conditions is None else set(self.conditions.shown())
        return _count(self.measure.executed()), shown

    def run(self, budget: int, horizon: int) -> list[Played]:
        if self.conditions is not None:
            self.conditions.restart()  # its rollouts' steps measured as a run of their own
        return self._run(budget, horizon)

    def _run(self, budget: int, horizon: int) -> list[Played]:
        known, combinations = self._known()
        for root in range(ROOTS):
            self.reference.reset(self.seed + root)
            self._add(self.reference.read_state(), 0.0)
        kept: list[Played] = []
        progress = 0  # the step of the last new code or new level
        idle = 0  # rollouts since the last new code
        while self.steps < budget:
            if self.steps - progress > budget * PATIENCE or idle >= ROLLOUT_PATIENCE:
                self.stalled = True
                break
            idle += 1
            self.rollouts += 1
            level, cell = self._pick()
            cell.chosen += 1
            level.chosen += 1
            levels = len(self.levels)
            played = self._rollout(cell, min(horizon, budget - self.steps), len(kept))
            taken, now = self._known()
            if taken > known or now - combinations:
                self.new_exits += taken - known
                self.new_combinations += len(now - combinations)
                # What the rollout reached, for its divergence's message.
                self.reached[len(kept)] = ["a branch no level reached"] if taken > known else []
                self.reached[len(kept)] += [
                    f"{c}, which no level had" for c in sorted(now - combinations)
                ]
                known, combinations = taken, now
                cell.found += 1
                level.found += 1
                kept.append(played)
                progress, idle = self.steps, 0
            elif len(self.levels) > levels:
                progress = self.steps
        return kept

    def _pick(self) -> tuple[Level, Cell]:
        """A level, then a cell of it: each weighted by how rarely it was picked and how
        often its rollouts found new code, cells also by how rarely they were reached."""
        groups = list(self.levels.values())
        # Levels in the order they were first reached: the later, the deeper in play (a
        # board with fewer bricks), and the more of the picks it gets.
        depth = np.arange(1, len(groups) + 1) / len(groups)
        weights = np.array(
            [
                (1.0 + group.found) / (1 + group.chosen) * FRONTIER ** depth[number]
                for number, group in enumerate(groups)
            ]
        )
        group = groups[int(self.rng.choice(len(groups), p=weights / weights.sum()))]
        weights = np.array(
            [
                (1.0 + c.found) * (1.0 / math.sqrt(1 + c.chosen) + 1.0 / math.sqrt(1 + c.seen))
                for c in group.cells
            ]
        )
        return group, group.cells[int(self.rng.choice(len(group.cells), p=weights / weights.sum()))]

    def _rollout(self, cell: Cell, horizon: int, index: int) -> Played:
        reference = self.reference
        # A reset first: what the state does not hold (a Gymnasium wrapper's counters) starts
        # as in a fresh episode, as L1 and the cases do.
        reference.reset(None)
        reference.write_state(cell.state)
        states, actions, outputs = [], [], []
        score = cell.score
        action: Any = None
        for _ in range(horizon):
            before = reference.read_state()
            action = self._action(action, before)
            states.append(before)
            out = reference.step(action)
            self.steps += 1
            actions.append(action)
            outputs.append(out)
            # A game's rewards are one per player: the best of them scores the cell.
            score += float(np.max(out.reward))
            if out.terminated or out.truncated:
                break
            self._add(reference.read_state(), score)
        return Played.episode(EpisodePlan(index, 0, "explore", None), states, actions, outputs)

    def _action(self, previous: Any, state: State) -> Any:
        if previous is not None and self.rng.random() < 0.5:
            return previous  # sticky: long moves reach what alternating ones undo
        if self.policy is not None and self.rng.random() < 0.5:
            return self.policy(state, self.rng)
        return uniform_actions(self.space, self.rng, 1)[0]

    def _add(self, state: State, score: float) -> None:
        key = self.cell_of(state)
        cell = self.archive.get(key)
        if cell is None:
            cell = self.archive[key] = Cell({k: np.array(v) for k, v in state.items()}, score)
            self.levels.setdefault(key[0], Level([])).cells.append(cell)
            return
        cell.seen += 1
        if score > cell.score:
            cell.state, cell.score = {k: np.array(v) for k, v in state.items()}, score


def _count(taken: dict[str, set[Any]]) -> int:
    return sum(len(arcs) for arcs in taken.values())


def _write_cases(spec: PortSpec, played: Played, seed: int) -> Path:
    """The kept rollouts as proposed cases (docs/verification.md), for the replay line."""
    text = cases_text(played, "Rollouts l3.explore kept (reached a branch no level had).")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    directory = cache_home() / "explored" / f"{spec.name}-{seed}-{digest}"
    directory.mkdir(parents=True, exist_ok=True)
    write_atomically(directory / "cases.toml", text)
    return directory
