"""The reference side: make a Gymnasium env, reset, step, read and write its state.

The reference is the user's trusted code, so it runs in the verifier's process; only port
code is kept at arm's length (docs/design.md, contract 7).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from envport.errors import SpecError
from envport.io import profile
from envport.runs import harness
from envport.spec import PortSpec
from envport.structure import decode, encode
from envport.targets import rule_trace
from envport.targets.randomness import NoiseRecorder
from envport.targets.rule_trace import reference_call
from envport.targets.simultaneous import Simultaneous
from envport.targets.turns import TurnBased

State = dict[str, np.ndarray]


def _env_step(env: Any, action: Any) -> Any:
    return env.step(action)


def _harness_module(spec: PortSpec, relative: str, key: str) -> Any:
    """A harness file beside the spec (`harness/reference.py`), imported once per path: a
    reference factory or a state bridge that is the spec's own code, not an installed
    package. Checked like probes against the run's frozen copy (envport.runs.harness)."""
    path = spec.harness_file(relative)
    if not path.is_file():
        raise SpecError(f"key `{key}`: harness file {path} does not exist")
    harness.check(path)
    name = f"envport_reference_harness_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise SpecError(f"key `{key}`: {path} cannot be loaded")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except ImportError as error:
        del sys.modules[name]
        raise SpecError(f"key `{key}`: {path} cannot import: {error}") from None
    return module


def import_attr(target: str, key: str, spec: PortSpec | None = None) -> Callable[..., Any]:
    module_name, _, attr = target.partition(":")
    if module_name.endswith(".py") and spec is not None:
        module = _harness_module(spec, module_name, key)
        try:
            return getattr(module, attr)
        except AttributeError:
            defined = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
            raise SpecError(
                f"key `{key}`: {module_name} has no `{attr}` (it defines "
                f"{', '.join(f'`{n}`' for n in defined) or 'no function'})"
            ) from None
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SpecError(f"key `{key}`: cannot import module `{module_name}`: {error}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise SpecError(f"key `{key}`: module `{module_name}` has no `{attr}`") from None


def valid_helpers(spec: PortSpec) -> dict[str, Any]:
    """The public functions of the spec's `state.helpers` file, for `state.valid`."""
    if spec.state.helpers is None:
        return {}
    path = str(spec.harness_file(spec.state.helpers))
    if path not in _HELPERS:  # asked for every drawn state: loaded and checked once
        module = _harness_module(spec, spec.state.helpers, "state.helpers")
        _HELPERS[path] = {
            name: value
            for name, value in vars(module).items()
            if callable(value) and not name.startswith("_")
        }
    return _HELPERS[path]


_HELPERS: dict[str, dict[str, Any]] = {}


def make_env(spec: PortSpec) -> Any:
    """Build the reference env named by `reference.entry`."""
    prefix, _, name = spec.reference.entry.partition(":")
    if prefix == "gymnasium":
        import gymnasium

        try:
            return gymnasium.make(name, **spec.reference.kwargs)
        except gymnasium.error.Error as error:
            raise SpecError(
                f"key `reference.entry`: unknown Gymnasium env id `{name}` ({error}); "
                "check `gymnasium.envs.registry` for the ids installed here"
            ) from None
        except TypeError as error:
            raise SpecError(f"key `reference.kwargs`: {error}") from None
    factory = import_attr(spec.reference.entry, "reference.entry", spec)
    try:
        return factory(**spec.reference.kwargs)
    except TypeError as error:
        raise SpecError(f"key `reference.kwargs`: {error}") from None


def _resolve(env: Any, path: str) -> tuple[Any, str]:
    """The object holding the last attribute of `path`, and that attribute's name."""
    *parents, last = path.split(".")
    holder = env
    for part in parents:
        holder = getattr(holder, part)
    return holder, last


def _reward(value: Any) -> Any:
    """A float, or for a turn-based game one float per player (envport.targets.turns)."""
    return float(value) if np.ndim(value) == 0 else np.asarray(value, dtype=np.float64)


@dataclass
class Transition:
    obs: np.ndarray
    reward: Any  # float; a game's is one float per player
    terminated: bool
    truncated: bool
    # A stochastic env's step: the port's noise, mapped from the draws the reference made.
    noise: np.ndarray | None = None


class Reference:
    """One reference env with state access as the spec describes it."""

    def __init__(self, spec: PortSpec) -> None:
        self.spec = spec
        # Stepping past termination or unusual states triggers Gymnasium warnings that are
        # noise here: the harness decides what is compared.
        logging.getLogger("gymnasium").setLevel(logging.ERROR)
        warnings.filterwarnings("ignore", module="gymnasium")
        self.env = make_env(spec)
        if spec.game is not None:
            # A PettingZoo game, presented as one stream of turns (contract 8).
            self.env = TurnBased(self.env, spec.game.players, spec.game.actions)
        elif spec.parallel is not None:
            # A PettingZoo Parallel env, presented as one env of joint actions.
            self.env = Simultaneous(self.env, spec.parallel)
        state = spec.state
        self._reader = import_attr(state.read, "state.read", spec) if state.read else None
        self._writer = import_attr(state.write, "state.write", spec) if state.write else None
        if not state.names and not (self._reader and self._writer):
            raise SpecError("key `state`: give `fields` or both `read` and `write` bridges")
        self.action_space = self.env.action_space
        self.observation_space = self.env.observation_space
        self.max_episode_steps: int | None = getattr(self.env.spec, "max_episode_steps", None)
        self._holders: dict[str, tuple[Any, str]] = {}
        # Stochastic envs: each step's draws are recorded and mapped to the port's noise.
        self.recorder: NoiseRecorder | None = NoiseRecorder(spec) if spec.randomness else None

    def reset(self, seed: int | None) -> np.ndarray:
        """reset(seed); with None, the next reset of the same stream (no new generator: a
        tenth of the cost, for checks that draw thousands of resets)."""
        # A reset starts each drawn example (L1), sequence (L2) and episode: progress.
        profile.tick("resets")
        with reference_call():  # the profile's "reference" phase
            obs, _ = self.env.reset(seed=seed)
        self.track()
        return np.asarray(obs)

    def track(self) -> None:
        """Follow the env after a reset, including one made elsewhere (a Gymnasium vector env
        resetting its sub-envs): reinstall the draw recorder and resolve the state fields."""
        if self.recorder is not None:
            self.recorder.install(self.env)
        # Resolved once per episode: reading state every step must stay cheap.
        self._holders = {
            name: self._holder(name, path) for name, path in self.spec.state.fields.items()
        }

    def _holder(self, name: str, path: str) -> tuple[Any, str]:
        try:
            holder, attr = _resolve(self.env, path)
            getattr(holder, attr)
        except AttributeError:
            raise SpecError(
                f"key `state.fields.{name}`: the reference has no attribute `{path}`"
            ) from None
        return holder, attr

    def step(self, action: Any) -> Transition:
        # Timed by `reference_call` alone (one span a step: the profile's cost must stay
        # small beside a step of CartPole's); a stochastic env's noise mapping is "other".
        rule_trace.before_step(self.env, _env_step, action)
        if self.recorder is None:
            with reference_call():
                obs, reward, terminated, truncated, _ = self.env.step(action)
            return Transition(np.asarray(obs), _reward(reward), bool(terminated), bool(truncated))
        before = self.read_state()
        self.recorder.begin()
        with reference_call():
            obs, reward, terminated, truncated, _ = self.env.step(action)
        noise = self.recorder.noise(before, action, self.env)
        return Transition(
            np.asarray(obs), _reward(reward), bool(terminated), bool(truncated), noise
        )

    def legal_actions(self) -> list[int] | None:
        """A game's legal moves for the player to move (None for a single-agent env)."""
        return self.env.legal_actions() if isinstance(self.env, TurnBased) else None

    def try_action(self, action: Any) -> Transition:
        """The transition `action` would make, with the env left as it was (a one-ply
        player's look-ahead, through the state bridge)."""
        state = self.read_state()
        outcome = self.step(action)
        self.write_state(state)
        return outcome

    def fresh(self, seed: int, state: State) -> None:
        """A fresh env given `state` whose draws continue the stream drawn from now: hidden
        bookkeeping starts over with `reset(seed)`, always the one seed, so a reference whose
        reset builds something costly can keep what it built (Crafter's harness keeps its
        worlds; an unseeded reset would build a new one each time). The reset makes or
        reseeds the generator, so the stream is set aside before it and resumed after."""
        held = self.recorder.hold() if self.recorder is not None else None
        self.reset(seed)
        if self.recorder is not None:
            self.recorder.resume(held)
        self.write_state({**self.read_state(), **state})

    def reseed_draws(self, seed: int) -> None:
        """From now on draw from a fresh stream seeded `seed` (no-op for deterministic envs)."""
        if self.recorder is not None:
            self.recorder.reseed(seed)

    def read_state(self) -> State:
        """The state as leaves of fixed shape (a declared list: its padded items and its
        length; envport.structure)."""
        with profile.phase("reference"):
            return self._read_state()

    def _read_state(self) -> State:
        if self._reader is not None:
            return encode(self.spec.state, self._reader(self.env))
        return encode(
            self.spec.state, {name: getattr(h, attr) for name, (h, attr) in self._holders.items()}
        )

    def write_state(self, state: State) -> None:
        with profile.phase("reference"):
            self._write_state(state)

    def _write_state(self, state: State) -> None:
        raw = decode(self.spec.state, state)
        if self._writer is not None:
            self._writer(self.env, raw)
            return
        for name, (holder, attr) in self._holders.items():
            current = getattr(holder, attr)
            value: Any = raw[name]
            # Keep the reference's own types: it may compare with `is None` or index arrays.
            if isinstance(current, np.ndarray):
                value = np.array(value, dtype=current.dtype)
            elif isinstance(current, bool | np.bool_):
                value = bool(value)
            elif isinstance(current, int | np.integer):
                value = int(value)
            elif isinstance(current, float | np.floating):
                value = float(value)
            elif isinstance(current, list):
                value = list(value)  # a declared list, decoded to its items in use
            setattr(holder, attr, value)
