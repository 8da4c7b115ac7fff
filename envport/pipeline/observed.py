"""The numeric types the reference really uses, measured by stepping it, for the prompts.

A port that guesses types diverges in ways the source does not show at a glance:
MountainCarContinuous keeps its state as float32 after every step, Acrobot's state is
float32 after a reset and float64 after a step, a reward may be a Python float or a NumPy
scalar. The reference is trusted code (docs/design.md, contract 7), so it is stepped here,
in the driver: a few resets and seeded random actions, the same every time, so the prompt
that states the types renders the same bytes on every run and on resume.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.targets.turns import TurnBased
from envport.verifiers.levels.l2.reset_after import Played

STEPS = 64
SEED = 0


@dataclass(frozen=True)
class ObservedTypes:
    """One phrase per state field, and for the observation, reward and flags."""

    fields: list[tuple[str, str]]
    observation: str
    reward: str
    flags: str
    # What decides which lines of the prompt apply (a line that does not apply is noise a
    # model may act on): a Box action space, any float-valued state field, the time limit.
    box_actions: bool = True
    float_state: bool = True
    time_limit: int | None = None
    # The spaces as Gymnasium prints them, and what each action means where the reference
    # says (`get_action_meanings`, or an action set its wrapper maps indices through).
    action_space: str = ""
    observation_space: str = ""
    action_meanings: list[str] | None = None
    # A two-player game: what one player's observation and mask are in the reference (the
    # levels' turn record is the harness's, not something a port returns).
    game: dict[str, str] | None = None
    # What the reference keeps across reset() (`state.last_action`), measured as
    # l2.reset_after_play measures it: a JAX port then owes `reset_after`.
    kept_across_reset: tuple[str, ...] = ()


def action_meanings(env: Any) -> list[str] | None:
    """What each action index means, where the env or a wrapper says: Atari-style
    `get_action_meanings()`, an action set the wrapper maps indices through, or an
    enumeration of the actions."""
    for holder in (env, getattr(env, "unwrapped", None)):
        if holder is None:
            continue
        meanings = getattr(holder, "get_action_meanings", None)
        if callable(meanings):
            try:
                return [str(m) for m in meanings()]
            except Exception:  # a reference's own helper failing says nothing about actions
                pass
        for name in ("action_set", "minimal_action_set", "actions"):
            found = getattr(holder, name, None)
            if isinstance(found, list | tuple) and found and len(found) < 64:
                return [f"{name}[{i}] = {value!r}" for i, value in enumerate(found)]
            # An enumeration of the actions (MiniGrid's `self.actions = Actions`, an IntEnum).
            if isinstance(found, type) and issubclass(found, enum.Enum) and len(found) < 64:
                members = list(found)
                if all(isinstance(m.value, int) for m in members):
                    return [f"{m.value} = {name}.{m.name}" for m in members]
    return None


def describe(value: Any) -> str:
    """A value's type as a port author needs it: `NumPy float64 array, shape (4,)`."""
    if isinstance(value, np.ndarray):
        return f"NumPy {value.dtype} array, shape {tuple(value.shape)}"
    if isinstance(value, np.generic):
        return f"NumPy {np.asarray(value).dtype} scalar"
    if isinstance(value, bool | int | float | str):
        return f"Python {type(value).__name__}"
    if isinstance(value, tuple | list):
        kinds = sorted({describe(item) for item in value})
        inner = kinds[0] if len(kinds) == 1 else " / ".join(kinds)
        return f"Python {type(value).__name__} of {len(value)} ({inner})"
    return f"Python {type(value).__name__}"


def _when(after_reset: list[str], after_step: list[str]) -> str:
    """`X` when every reading agrees, else each kind with when it was seen."""
    seen = list(dict.fromkeys(after_reset + after_step))
    if len(seen) == 1:
        return seen[0]
    parts = []
    for kind in seen:
        where = [w for w, group in (("reset", after_reset), ("step", after_step)) if kind in group]
        parts.append(f"{kind} after {' and after '.join(where)}")
    return "; ".join(parts)


def _read(env: Any, path: str) -> Any:
    value = env
    for part in path.split("."):
        value = getattr(value, part)
    return value


def observe(spec: PortSpec) -> ObservedTypes:
    """Reset and step the reference with seeded random actions, noting each value's type."""
    reference = Reference(spec)
    env = reference.env
    env.action_space.seed(SEED)
    names = list(spec.state.fields) or None
    states: dict[str, tuple[list[str], list[str]]] = {}
    obs: tuple[list[str], list[str]] = ([], [])
    rewards: list[str] = []
    flags: list[str] = []
    kinds: set[str] = set()

    def note(after: int) -> None:
        if names is None:
            # A bridge: the types as the harness reads them (the bridge's own conversion).
            read = reference.read_state()
        else:
            read = {name: _read(env, path) for name, path in spec.state.fields.items()}
        for name, value in read.items():
            states.setdefault(name, ([], []))[after].append(describe(value))
            kinds.add(np.asarray(value).dtype.kind)

    # The env is stepped directly (not through Reference.step, which converts the reward,
    # nor after Reference.track, which installs the draw recorder): the raw values count.
    # A game's own reward values as each step leaves them: after a reset they are 0 (a
    # Python int in PettingZoo) whatever the payoffs are (0.5, 1.5 in a card game).
    game_rewards: list[str] = []
    first, _ = env.reset(seed=SEED)
    obs[0].append(describe(first))
    note(0)
    for _ in range(STEPS):
        observation, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        obs[1].append(describe(observation))
        rewards.append(describe(reward))
        flags += [describe(terminated), describe(truncated)]
        if isinstance(env, TurnBased):
            game_rewards += [describe(value) for value in env.aec.rewards.values()]
        note(1)
        if terminated or truncated:
            again, _ = env.reset()
            obs[0].append(describe(again))
            note(0)
    meanings = action_meanings(env)
    game = _game_types(env, game_rewards)
    # A game's reset is envport's own around the port's `init`: nothing of the port's to carry.
    kept = () if game is not None else tuple(Played(spec, reference, SEED).kept)
    kept = tuple(name.removeprefix("state.") for name in kept)
    env.close()
    return ObservedTypes(
        fields=[(name, _when(*seen)) for name, seen in states.items()],
        observation=_when(*obs),
        reward=_when([], rewards),
        flags=_when([], flags),
        box_actions=isinstance(env.action_space, spaces.Box),
        float_state=bool(kinds & {"f", "c"}),
        time_limit=reference.max_episode_steps,
        action_space=str(env.action_space),
        observation_space=str(env.observation_space),
        action_meanings=meanings,
        game=game,
        kept_across_reset=kept,
    )


def _game_types(env: Any, rewards: list[str]) -> dict[str, str] | None:
    """A PettingZoo game's own observation, mask and reward types, as a player sees them
    (`rewards`: each step's reward values described), and the dtype the harness compares a
    port's observation on (envport.targets.turns.record_dtype)."""
    if not isinstance(env, TurnBased):
        return None
    aec = env.aec
    seen = aec.observe(aec.agent_selection)
    observation = np.asarray(seen["observation"] if isinstance(seen, dict) else seen)
    return {
        "observation": describe(observation),
        "action_mask": describe(seen["action_mask"]) if isinstance(seen, dict) else "in infos",
        "reward": " or ".join(dict.fromkeys(rewards)) or "Python int",
        # A float observation is compared on its own dtype; any other by value.
        "observation_dtype": str(observation.dtype) if observation.dtype.kind == "f" else "",
    }
