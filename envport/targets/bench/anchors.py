"""Anchors: published JAX implementations of an env, timed beside a port as its yardstick.

An anchor is named `kind:EnvId` and offers what the bench's JAX loop drives:
`reset(key) -> (obs, state)` and `step(key, state, action) -> (obs, state, reward, done)`,
`done` before any autoreset (the loop restarts an ended env itself, the same way for ports
and anchors). Its actions are the reference's: the loop cycles actions drawn from the
reference's action space, and an anchor whose codes differ translates them.

Anchors are the user's trusted choice but still run in the worker, beside the port, so
both are timed under the same conditions; nothing here is imported by the driver except
the names below (the worker imports gymnax, xminigrid or pgx on first use).
"""

from __future__ import annotations

import re
from typing import Any

from envport.targets.loader import ContractError

ANCHORS = ("gymnax", "xminigrid", "pgx")
# A bridge (a port directory wrapping a third-party env in envport's port contract, such as
# examples/mpe_simple_spread/ports/jaxmarl) is timed as an anchor named `bridge:DIR`: it is
# loaded as a port of the spec's target in a worker of its own, so a package with no anchor
# class here (JaxMARL) is timed by the bridge that verifies it, through the same loop.
BRIDGE = "bridge"
ANCHOR_USAGE = (
    "expected gymnax:EnvId, xminigrid:EnvId, pgx:EnvId or bridge:PORT_DIR (e.g. "
    "gymnax:CartPole-v1, pgx:minatar-breakout, "
    "bridge:examples/mpe_simple_spread/ports/jaxmarl)"
)


class GymnaxAnchor:
    """A gymnax env from `gymnax.make`, driven through its transition before autoreset."""

    backend = "gymnax"

    def __init__(self, name: str) -> None:
        import gymnax

        self.env, self.params = gymnax.make(name)

    def reset(self, key: Any) -> Any:
        return self.env.reset_env(key, self.params)

    def step(self, key: Any, state: Any, action: Any) -> Any:
        obs, state, reward, terminated, _ = self.env.step_env(key, state, action, self.params)
        return obs, state, reward, terminated | self.env.is_truncated(state, self.params)


# MiniGrid's action codes (left, right, forward, pickup, drop, toggle, done) as xminigrid's
# (0 forward, 1 turn clockwise, 2 turn counter-clockwise, 3 pick up, 4 put down, 5 toggle).
# xminigrid has no `done` (a no-op in MiniGrid); it is sent as toggle, also a no-op unless
# the agent faces a door or a box.
MINIGRID_TO_XMINIGRID = (2, 1, 0, 3, 4, 5, 5)


class XMiniGridAnchor:
    """An xminigrid env from `xminigrid.make`, stepped without its autoreset wrappers.

    Its state is xminigrid's TimeStep (state, observation, reward, step type); an env is
    done when the step type is LAST (the goal reached, or `max_steps` steps taken).
    """

    backend = "xminigrid"

    def __init__(self, name: str) -> None:
        import jax.numpy as jnp
        import xminigrid

        if name not in xminigrid.registered_environments():
            # xminigrid's own error lists every id on one very long line.
            raise ContractError(
                f"xminigrid has no env {name!r}; its MiniGrid ones are "
                + ", ".join(e for e in xminigrid.registered_environments() if "MiniGrid-" in e)
            )
        self.env, self.params = xminigrid.make(name)
        self.actions = jnp.asarray(MINIGRID_TO_XMINIGRID, dtype=jnp.int32)

    def reset(self, key: Any) -> Any:
        timestep = self.env.reset(self.params, key)
        return timestep.observation, timestep

    def step(self, key: Any, state: Any, action: Any) -> Any:
        import jax.numpy as jnp

        code = self.actions[jnp.clip(action, 0, len(MINIGRID_TO_XMINIGRID) - 1)]
        timestep = self.env.step(self.params, state, code)
        return timestep.observation, timestep, timestep.reward, timestep.last()


# The reference's action codes as pgx's, for a pgx game whose codes differ.
PGX_ACTIONS: dict[str, tuple[int, ...]] = {"leduc_holdem": (0, 1, 2, 0)}


class PgxAnchor:
    """A pgx env from `pgx.make`, with pgx's defaults, driven through its public `init`/`step`.

    pgx's MinAtar games take the index into MinAtar's minimal action set by default, the
    same codes as the examples' references (`MinAtar/<Game>-v1`), so actions pass as they
    are; their sticky actions stay at pgx's (and MinAtar's) 0.1, a draw pgx makes every step
    whatever the probability. The reward is the first player's (MinAtar has one); pgx never
    truncates, so done is `terminated`. Leduc hold'em has three actions in pgx (call, raise,
    fold; its call with nothing to call is a check) where RLCard has four: RLCard's check
    (3) is given as pgx's call, not clipped to pgx's last action (fold), which would end
    pgx's hands sooner than the port's and time another game.
    """

    backend = "pgx"

    def __init__(self, name: str) -> None:
        import jax.numpy as jnp
        import pgx

        if name not in pgx.available_envs():
            # pgx's own error lists every id, one per line.
            raise ContractError(
                f"pgx has no env {name!r}; its envs are " + ", ".join(pgx.available_envs())
            )
        self.env = pgx.make(name)
        codes = PGX_ACTIONS.get(name)
        # Built once here: `step` runs inside the timed loop.
        self.codes = None if codes is None else jnp.asarray(codes, jnp.int32)

    def reset(self, key: Any) -> Any:
        state = self.env.init(key)
        return state.observation, state

    def step(self, key: Any, state: Any, action: Any) -> Any:
        if self.codes is not None:
            action = self.codes[action]
        state = self.env.step(state, action, key)
        return state.observation, state, state.rewards[0], state.terminated | state.truncated


_KINDS = {"gymnax": GymnaxAnchor, "xminigrid": XMiniGridAnchor, "pgx": PgxAnchor}
_anchors: dict[str, Any] = {}


def anchor_kind(name: str) -> str | None:
    """The anchor's kind (`gymnax`, `xminigrid`, `pgx`), or None when `name` is not `kind:EnvId`."""
    kind, _, env_id = name.partition(":")
    return kind if kind in ANCHORS and env_id else None


def bridge_dir(name: str) -> str | None:
    """The port directory of a `bridge:DIR` anchor, or None for any other name."""
    kind, _, directory = name.partition(":")
    return directory if kind == BRIDGE and directory else None


def foreign_anchor(name: str, reference: str) -> str | None:
    """The words of an anchor's env id that the reference's names (the spec's name and
    entry, or its env id) do not hold: an anchor of another game, whose speed beside the
    port means nothing (`pgx:chess` on Connect Four). Versions and sizes (`v1`, `8x8`) are
    left out, so a MiniGrid room of another size is still the game; None when all match."""
    held = re.sub(r"[^a-z0-9]", "", reference.lower())
    words = [w.lower() for w in re.split(r"[^A-Za-z0-9]+", name.partition(":")[2]) if w]
    missing = [w for w in words if not re.search(r"\d", w) and w not in held]
    return ", ".join(missing) if missing else None


def load_anchor(name: str) -> Any:
    kind = anchor_kind(name)
    if kind is None:
        raise ContractError(f"anchor {name!r}: {ANCHOR_USAGE}")
    if name not in _anchors:
        _anchors[name] = _KINDS[kind](name.partition(":")[2])
    return _anchors[name]
