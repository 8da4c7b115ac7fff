"""Field-by-field comparison of a reference trajectory with a port's, with tolerances.

Discrete fields (integer or boolean) compare exactly; float fields use the spec's per-field
atol/rtol (docs/design.md, contract 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from envport.io import profile
from envport.spec import PortSpec
from envport.targets import simultaneous
from envport.targets.turns import record_names
from envport.verifiers.reporting.divergence import FieldDiff
from envport.verifiers.reporting.grids import attach_obs_picture
from envport.verifiers.reporting.moves import record_moves

STEP_FIELDS = ("obs", "reward", "terminated", "truncated")


@dataclass
class Steps:
    """Outputs of L consecutive transitions: obs (L, ...), reward, terminated, truncated (L,)."""

    obs: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray

    def parts(self) -> tuple[np.ndarray, ...]:
        return self.obs, self.reward, self.terminated, self.truncated

    @classmethod
    def join(cls, parts: list[Steps]) -> Steps:
        return cls(
            *(np.concatenate(group) for group in zip(*(p.parts() for p in parts), strict=True))
        )

    @classmethod
    def of(cls, answer: dict, rows: slice = slice(None)) -> Steps:
        """The four outputs from a worker's answer, optionally only some rows."""
        return cls(*(np.asarray(answer[name])[rows] for name in STEP_FIELDS))

    @classmethod
    def single(cls, transition: Any) -> Steps:
        """One reference transition as a length-1 sequence."""
        return cls(
            np.asarray(transition.obs)[None],
            np.asarray([transition.reward]),
            np.asarray([transition.terminated]),
            np.asarray([transition.truncated]),
        )


def obs_names(spec: PortSpec, size: int) -> list[str]:
    names = spec.observation.names
    if spec.parallel is not None:
        # Agents moving at once: every agent's observation, stacked (`agent_1.obs[4]`).
        return simultaneous.agent_names(spec.parallel, size, names)
    if len(names) == size:
        return [f"obs.{n}" for n in names]
    if spec.game is not None and size > spec.game.actions:
        # A game's turn record (envport.targets.turns): observation, player to move, mask.
        return record_names(size, spec.game.actions, names)
    return [f"obs[{i}]" for i in range(size)]


def obs_columns(spec: PortSpec, size: int) -> list[tuple[int, str]]:
    """The components of a flat observation that are compared, by index and name: all of
    them, but for the padding of agents observing fewer components than the longest
    (`[parallel] observation_sizes`), which neither side computes."""
    names = obs_names(spec, size)
    if spec.parallel is None:
        return list(enumerate(names))
    padded = simultaneous.padding(spec.parallel, size)
    return [(i, name) for i, name in enumerate(names) if not padded[i]]


def unpadded(spec: PortSpec, obs: np.ndarray) -> np.ndarray:
    """A batch of observations `[B, ...]` with the padding of agents observing fewer
    components (`obs_columns`) set to 0: what a port leaves there (NaN, an unset buffer)
    is not its observation, so comparisons of whole rows must not see it."""
    obs = np.asarray(obs)
    if spec.parallel is None or spec.parallel.observation_sizes is None or obs.ndim < 2:
        return obs
    flat = obs.reshape(len(obs), -1)
    padded = simultaneous.padding(spec.parallel, flat.shape[1])
    if not padded.any():
        return obs
    flat = flat.copy()
    flat[:, padded] = 0
    return flat.reshape(obs.shape)


def reward_names(spec: PortSpec, width: int) -> list[str]:
    """A game's reward columns by player (`rewards[player_1]`), agents' by agent
    (`agent_1.reward`); one reward is `reward`."""
    if spec.parallel is not None and len(spec.parallel.agents) == width:
        return simultaneous.reward_names(spec.parallel.agents)
    players = spec.game.players if spec.game is not None else []
    if len(players) == width:
        return [f"rewards[{p}]" for p in players]
    return [f"rewards[{i}]" for i in range(width)]


def _discrete_obs(expected_obs: np.ndarray, actual_obs: np.ndarray) -> bool:
    """A Discrete observation (FrozenLake, Taxi) is a Python int in Gymnasium: its width is not
    part of the contract (JAX ports answer int32), so any integer dtype passes; the values
    still compare exactly."""
    if expected_obs.ndim == 1:
        return expected_obs.dtype.kind in "iu" and actual_obs.dtype.kind in "iu"
    # A Tuple of Discretes (Blackjack) is a tuple of Python ints, stacked as int64: the same
    # holds, for the two widths a Python int becomes (int64 in NumPy, int32 in JAX).
    return (
        expected_obs.ndim == 2
        and expected_obs.dtype == np.int64
        and actual_obs.dtype in (np.int32, np.int64)
    )


def contract_problems(expected_obs: np.ndarray, actual_obs: np.ndarray) -> list[FieldDiff]:
    """Observation dtype and shape must match the reference's (checked once per level)."""
    problems = []
    if actual_obs.dtype != expected_obs.dtype and not _discrete_obs(expected_obs, actual_obs):
        problems.append(
            FieldDiff(
                field="obs.dtype", expected=str(expected_obs.dtype), actual=str(actual_obs.dtype)
            )
        )
    if actual_obs.shape[1:] != expected_obs.shape[1:]:
        problems.append(
            FieldDiff(
                field="obs.shape",
                expected=list(expected_obs.shape[1:]),
                actual=list(actual_obs.shape[1:]),
            )
        )
    return problems


def _columns(
    spec: PortSpec, expected: Steps, actual: Steps
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    length = len(expected.reward)
    ref_obs = expected.obs.reshape(length, -1)
    port_obs = actual.obs.reshape(length, -1)
    columns = [
        (name, ref_obs[:, i], port_obs[:, i]) for i, name in obs_columns(spec, ref_obs.shape[1])
    ]
    if expected.reward.ndim == 2:
        # One reward per player: a port answering a single reward fails here by name.
        width = expected.reward.shape[1]
        got = actual.reward.reshape(length, -1)
        if got.shape[1] != width:
            got = np.full((length, width), np.nan)
        columns += [
            (name, expected.reward[:, i], got[:, i])
            for i, name in enumerate(reward_names(spec, width))
        ]
    else:
        got = actual.reward if actual.reward.ndim == 1 else np.full(length, np.nan)
        columns.append(("reward", expected.reward, got))
    columns += [
        ("terminated", expected.terminated, actual.terminated),
        ("truncated", expected.truncated, actual.truncated),
    ]
    return columns


def divergent_steps(
    spec: PortSpec, expected: Steps, actual: Steps, free_running: bool, starts: np.ndarray
) -> list[tuple[int, list[FieldDiff]]]:
    """For each segment (episode) that diverges: its first differing step and every field
    differing there. Steps of all episodes come joined; `starts` marks where each begins."""
    with profile.phase("judging"):
        return _divergent_steps(spec, expected, actual, free_running, starts)


def _divergent_steps(
    spec: PortSpec, expected: Steps, actual: Steps, free_running: bool, starts: np.ndarray
) -> list[tuple[int, list[FieldDiff]]]:
    length = len(expected.reward)
    if length == 0:
        return []
    columns = _columns(spec, expected, actual)
    mismatches: list[np.ndarray] = []
    bounds: list[tuple[float, float] | None] = []
    for name, want, got in columns:
        if got.dtype.kind not in "biuf":
            # Not a number numpy can compare (bfloat16 arrives as raw bytes): every step
            # differs, and the field's dtype is what the report names.
            mismatches.append(np.ones(len(want), dtype=bool))
            bounds.append(None)
            continue
        if want.dtype.kind in "biu" and got.dtype.kind in "biu":
            mismatches.append(want != got)
            bounds.append(None)
        else:
            atol, rtol = spec.tolerance_for(name).bounds(free_running)
            want_f, got_f = want.astype(np.float64), got.astype(np.float64)
            mismatches.append(~np.isclose(got_f, want_f, atol=atol, rtol=rtol, equal_nan=True))
            bounds.append((atol, rtol))
    bad_steps = np.stack(mismatches, axis=1).any(axis=1)
    failing = np.flatnonzero(bad_steps)
    if failing.size == 0:
        return []
    segment = np.searchsorted(starts, failing, side="right") - 1
    # The first failing step of each diverging segment.
    firsts = failing[np.concatenate([[True], segment[1:] != segment[:-1]])]
    found = []
    for step in firsts:
        diffs = []
        for column, (name, want, got) in enumerate(columns):
            if not mismatches[column][step]:
                continue
            if got.dtype.kind not in "biuf":
                diffs.append(
                    FieldDiff(
                        field=f"{name}.dtype", expected=str(want.dtype), actual=str(got.dtype)
                    )
                )
                continue
            expected_value, actual_value = want[step].item(), got[step].item()
            tolerance = bounds[column]
            diffs.append(
                FieldDiff(
                    field=name,
                    expected=expected_value,
                    actual=actual_value,
                    difference=None
                    if tolerance is None
                    else abs(float(actual_value) - float(expected_value)),
                    atol=None if tolerance is None else tolerance[0],
                    rtol=None if tolerance is None else tolerance[1],
                )
            )
        attach_obs_picture(spec, expected.obs[step], actual.obs[step], diffs)
        record_moves(spec, expected.obs[step], diffs)
        found.append((int(step), diffs))
    return found
