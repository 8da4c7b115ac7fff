"""A two-player port in the pgx-style form, driven through the JAX and NumPy adapters.

Contract (docs/port-contract.md, Two-player games; docs/design.md, contract 8):
  JAX:   init(key) -> state; step(state, action, key) -> state (no autoreset)
  NumPy: init(rng, num_envs) -> state; step(state, actions[B]) -> state (batched dicts)
  both:  state_from_reference(ref) -> state; state_to_reference(state) -> ref
where a state holds (as attributes or keys) `current_player`, `observation` (the player to
move's view), `legal_action_mask`, `rewards` (one per player), `terminated`, `truncated`,
and whatever else the game keeps.

The adapters of the single-agent contracts (jax_port.py, numpy_port.py) already do
everything the levels ask (compiled batches, sessions, vector autoreset); the classes here
present a game's functions in their form, a step's outputs being the turn record
(envport.targets.turns), the reward vector and the endings. They run in the worker, around
the port's functions.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np

from envport.targets.loader import ContractError
from envport.targets.names import TargetName
from envport.targets.turns import turn_records


def is_game(entry: ModuleType) -> bool:
    """A game port exports `init` and `step`, and none of the single-agent entry points."""
    return (
        callable(getattr(entry, "init", None))
        and callable(getattr(entry, "step", None))
        and not hasattr(entry, "reset")
        and not hasattr(entry, "VectorEnv")
    )


def game_target() -> TargetName:
    """`--target auto` for a game port: JAX when its modules imported JAX."""
    return TargetName.JAX if "jax" in sys.modules else TargetName.NUMPY


def field(state: Any, name: str) -> Any:
    if isinstance(state, Mapping):
        if name not in state:
            raise ContractError(f"the port's game state has no `{name}` (two-player contract)")
        return state[name]
    if not hasattr(state, name):
        raise ContractError(f"the port's game state has no `{name}` (two-player contract)")
    return getattr(state, name)


# What every game state holds besides the game's own fields (the two-player contract).
STATE_FIELDS = (
    "current_player",
    "observation",
    "legal_action_mask",
    "rewards",
    "terminated",
    "truncated",
)


def require_fields(state: Any) -> None:
    """A state from the port's `init` holding every field of the contract, checked at load:
    a port without `legal_action_mask` is told so before any game is played."""
    held = list(state) if isinstance(state, Mapping) else [n for n in dir(state) if n[0] != "_"]
    missing = [name for name in STATE_FIELDS if name not in held]
    if missing:
        shown = [name for name in held if not callable(getattr(state, name, None))][:12]
        raise ContractError(
            f"the port's `init` returns a state without {', '.join(f'`{m}`' for m in missing)} "
            f"(it holds {', '.join(shown) or 'nothing'}); a game state holds "
            f"{', '.join(STATE_FIELDS)} (two-player contract)"
        )


def _require(entry: ModuleType) -> None:
    missing = [
        name
        for name in ("init", "step", "state_from_reference")
        if not callable(getattr(entry, name, None))
    ]
    if missing:
        raise ContractError(
            f"port entry `{entry.__name__}` lacks {', '.join(f'`{m}`' for m in missing)} "
            "(two-player contract)"
        )


class JaxGame:
    """A JAX game's functions in the gymnax form `JaxPort` drives.

    init(key) -> state                          (the game's start; key: a jax PRNG key)
    step(state, action int32, key) -> state     (one move of the player to move; no autoreset)
    state_from_reference(ref: dict[str, Array]) -> state     (one position; jax-traceable)
    state_to_reference(state) -> dict[str, Array]             (its inverse; jax-traceable)
    where state is a pytree (a NamedTuple, or a dict) holding, besides the game's own fields:
      current_player int32       the player to move, an index into the spec's players
      observation                that player's observation, the reference's shape; a float
                                 one in the reference's dtype (float32: never switch on
                                 `jax_enable_x64`, it is global), an integer one as bool
                                 or any integer (compared by value)
      legal_action_mask bool[A]  that player's legal actions
      rewards float32[P]         this move's reward of every player, in the players' order
                                 (compared as numbers, whatever type the reference's are)
      terminated bool, truncated bool    the game ended
    Everything is traced under jax.jit and jax.vmap (one game per call, a batch by vmap).
    """

    def __init__(self, entry: ModuleType) -> None:
        import jax
        import jax.numpy as jnp

        _require(entry)
        require_fields(entry.init(jax.random.PRNGKey(0)))
        self.jnp = jnp
        self.entry = entry
        self.__name__ = entry.__name__
        self.state_from_reference = entry.state_from_reference
        if callable(getattr(entry, "state_to_reference", None)):
            self.state_to_reference = entry.state_to_reference

    def _record(self, state: Any) -> Any:
        """The reference's record of one turn (turns.turn_records), traced."""
        jnp = self.jnp
        return turn_records(
            jnp.asarray(field(state, "observation"))[None],
            field(state, "current_player"),
            jnp.asarray(field(state, "legal_action_mask"))[None],
            xp=jnp,
        )[0]

    def reset(self, key: Any, params: Any) -> tuple[Any, Any]:
        del params
        state = self.entry.init(key)
        return self._record(state), state

    def bench_functions(self) -> tuple[Any, Any]:
        """The bench loop's reset and step on the game's own state and observation, as an
        anchor's (pgx's) are timed: the turn record is the checks' reading, not the port's
        work, so `envport bench` leaves it out."""
        entry = self.entry

        def reset(key: Any) -> tuple[Any, Any]:
            state = entry.init(key)
            return field(state, "observation"), state

        def step(key: Any, state: Any, action: Any) -> tuple[Any, ...]:
            nxt = entry.step(state, action, key)
            done = field(nxt, "terminated") | field(nxt, "truncated")
            return field(nxt, "observation"), nxt, field(nxt, "rewards"), done

        return reset, step

    def step(self, key: Any, state: Any, action: Any, params: Any) -> tuple[Any, ...]:
        del params
        nxt = self.entry.step(state, action, key)
        return (
            self._record(nxt),
            nxt,
            self.jnp.asarray(field(nxt, "rewards")),
            self.jnp.asarray(field(nxt, "terminated")),
            self.jnp.asarray(field(nxt, "truncated")),
            {},
        )


def _records(state: Mapping[str, Any]) -> np.ndarray:
    return turn_records(
        field(state, "observation"),
        field(state, "current_player"),
        field(state, "legal_action_mask"),
    )


class _VectorGame:
    """Gymnasium's next-step autoreset around a batched NumPy game (contract 5): the step
    after an env's game ends starts a new one there, with rewards 0."""

    entry: ModuleType

    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.rng = np.random.default_rng()
        self.state: dict[str, np.ndarray] = {}
        self.pending = np.zeros(num_envs, dtype=bool)

    def _init(self) -> dict[str, np.ndarray]:
        started = self.entry.init(self.rng, self.num_envs)
        if not isinstance(started, Mapping):
            raise ContractError("port `init` must return a dict of arrays (two-player contract)")
        return {k: np.asarray(v) for k, v in started.items()}

    def _merge(self, fresh: dict[str, np.ndarray], rows: np.ndarray) -> None:
        for key, value in fresh.items():
            keep = rows.reshape(-1, *[1] * (value.ndim - 1))
            self.state[key] = np.where(keep, value, self.state[key])

    def reset(self, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        self.rng = np.random.default_rng(seed)
        mask = None if not options else options.get("reset_mask")
        fresh = self._init()
        if mask is None or not self.state:
            self.state, self.pending = fresh, np.zeros(self.num_envs, dtype=bool)
        else:
            rows = np.asarray(mask, dtype=bool)
            self._merge(fresh, rows)
            self.pending = self.pending & ~rows
        return _records(self.state), {}

    def step(self, actions: Any) -> tuple[Any, ...]:
        nxt = self.entry.step(self.state, np.asarray(actions))
        if not isinstance(nxt, Mapping):
            raise ContractError("port `step` must return a dict of arrays (two-player contract)")
        restart, self.state = self.pending, {k: np.asarray(v) for k, v in nxt.items()}
        rewards = np.array(field(self.state, "rewards"), dtype=np.float64)
        if restart.any():
            self._merge(self._init(), restart)
            rewards[restart] = 0.0
        terminated = np.asarray(field(self.state, "terminated"), dtype=bool)
        truncated = np.asarray(field(self.state, "truncated"), dtype=bool)
        self.pending = terminated | truncated
        return _records(self.state), rewards, terminated, truncated, {}

    def set_state(self, states: Mapping[str, Any]) -> None:
        self.state = {k: np.array(v, copy=True) for k, v in states.items()}
        self.pending = np.zeros(len(next(iter(self.state.values()))), dtype=bool)

    def get_state(self) -> dict[str, np.ndarray]:
        return {k: np.array(v, copy=True) for k, v in self.state.items()}


class NumpyGame:
    """A batched NumPy game's functions in the `VectorEnv` form `NumpyPort` drives.

    init(rng: np.random.Generator, num_envs: int) -> state    (B games at their start)
    step(state, actions int[B]) -> state       (one move in each game; a new dict, inputs
                                                unmodified; no autoreset)
    state_from_reference(ref: dict of arrays [B, ...]) -> state   (B positions)
    state_to_reference(state) -> dict of arrays [B, ...]           (its inverse)
    where state is a dict of NumPy arrays with a leading batch axis B holding, besides the
    game's own fields:
      current_player int[B]         the player to move, an index into the spec's players
      observation [B, ...]          that player's observation; a float one in the
                                    reference's dtype, an integer one as bool or any
                                    integer (compared by value)
      legal_action_mask bool[B, A]  that player's legal actions
      rewards float[B, P]           this move's reward of every player, in the players' order
                                    (compared as numbers, whatever type the reference's are)
      terminated bool[B], truncated bool[B]    the game ended
    `step` must not fail on a game that has ended (a batch may step it); what it returns
    there is not compared.
    """

    def __init__(self, entry: ModuleType) -> None:
        _require(entry)
        started = entry.init(np.random.default_rng(0), 1)
        if not isinstance(started, Mapping):
            raise ContractError("port `init` must return a dict of arrays (two-player contract)")
        require_fields(started)
        self.entry = entry
        self.__name__ = entry.__name__
        self.VectorEnv = type("VectorEnv", (_VectorGame,), {"entry": entry})
        if callable(getattr(entry, "state_to_reference", None)):
            self.state_to_reference = self._to_reference

    def state_from_reference(self, ref: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """One env's state: the batched bridge on a batch of one."""
        batch = self.entry.state_from_reference({k: np.asarray(v)[None] for k, v in ref.items()})
        return {k: np.asarray(v)[0] for k, v in batch.items()}

    def states_from_reference(self, refs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        return {k: np.asarray(v) for k, v in self.entry.state_from_reference(dict(refs)).items()}

    def _to_reference(self, state: Mapping[str, Any]) -> dict[str, np.ndarray]:
        batch = self.entry.state_to_reference({k: np.asarray(v)[None] for k, v in state.items()})
        return {k: np.asarray(v)[0] for k, v in batch.items()}
