"""A turn-based game (a PettingZoo AEC env) presented to the verifier as one stream of turns.

The levels compare transitions: one action in, the outputs out. A two-player game's
transition is the mover's action and, after it, what pgx's `State` holds (docs/design.md,
contract 8): the player to move (`current_player`, an index into the spec's `[game]
players`), that player's observation and legal moves, this step's reward of every player,
and whether the game ended. PettingZoo spreads these over `agent_selection`, `observe()`,
the `rewards` and `terminations`/`truncations` dicts; `TurnBased` gathers them after each
`step` so that every level, written for one agent, compares them field by field:

- the observation the levels see is one record, `turn_record`: the observing
  player's observation, then `current_player`, then the legal-action mask (the port side
  packs its state the same way, envport.targets.game_port), so a divergence names
  `current_player` or `legal_action_mask[3]` like any observation component;
- the reward is a vector, one entry per player in the spec's order;
- `terminated` / `truncated` are any player's: the classic games end for all at once, and
  PettingZoo's illegal-move rule sets both for every player.

After a game ends PettingZoo wants a `step(None)` per agent (its dead steps); the levels
never step past an episode's end, so those are never taken here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from envport.errors import SpecError

# The record's fields after the observation, in order (names the reports use).
CURRENT_PLAYER = "current_player"
LEGAL_ACTION_MASK = "legal_action_mask"


def record_dtype(observation_dtype: Any, xp: Any = np) -> Any:
    """The dtype of a turn record, decided by the observation's dtype alone, the same rule
    on both sides. A float observation keeps its own dtype: the record is compared on it
    (a float32 port of a float32 observation is right, a float64 one is not), and the player
    to move and the 0/1 mask are small integers every float holds exactly. An integer or
    bool observation makes an int32 record: a 0/1 plane or mask may be bool on one side and
    int8 on the other (pgx's bool against PettingZoo's int8), compared by value. Never a
    promotion of the parts: NumPy widens float32 with int32 to float64 where JAX (x64 off)
    keeps float32, so a promoted record's dtype would say which library stacked it."""
    kind = np.dtype(observation_dtype).kind
    return observation_dtype if kind == "f" else xp.int32


def turn_records(observation: Any, current_player: Any, mask: Any, xp: Any = np) -> Any:
    """B turns as the flat records both sides are compared on (`xp`: numpy, or jax.numpy
    inside a traced port), of `record_dtype`."""
    observation, mask = xp.asarray(observation), xp.asarray(mask)
    dtype = record_dtype(observation.dtype, xp)
    count = observation.shape[0]
    return xp.concatenate(
        [
            observation.reshape(count, -1).astype(dtype),
            xp.asarray(current_player).reshape(count, 1).astype(dtype),
            mask.reshape(count, -1).astype(dtype),
        ],
        axis=1,
    )


def turn_record(observation: Any, current_player: Any, mask: Any) -> np.ndarray:
    """One turn's record (`turn_records` of a batch of one)."""
    one = turn_records(np.asarray(observation)[None], [current_player], np.asarray(mask)[None])
    return one[0]


def record_names(size: int, actions: int, observation: Sequence[str] = ()) -> list[str]:
    """Names of a turn record's `size` components: the observation's by the spec's
    `[observation] names` when there is one per component (`obs.my_chips.4`: a card game's
    one-hot chips read as chips, not as `obs[10]`), else by index (a declared observation
    grid names them by cell), then the player to move and the mask."""
    observed = size - 1 - actions
    if len(observation) == observed:
        shown = [f"obs.{name}" for name in observation]
    else:
        shown = [f"obs[{i}]" for i in range(observed)]
    return [
        *shown,
        CURRENT_PLAYER,
        *(f"{LEGAL_ACTION_MASK}[{i}]" for i in range(actions)),
    ]


def fresh_turn(env: Any, player: int) -> None:
    """For a game's state bridge (`write_state`, after it has set the position): clear what
    an AEC env's last turns left behind (rewards, terminations and truncations, infos, the
    illegal-move wrapper's flag and saved mask) and give the turn to `player`, an index into
    `possible_agents`, so any written position is played on from the start of a turn. `env`
    is the reference as a bridge receives it, or the PettingZoo env itself.

    Every PettingZoo classic family: the board games (chess, Connect Four, Go, tic-tac-toe,
    rock-paper-scissors) pick the next agent with an `AgentSelector`, which is moved to
    `player`; the card games on RLCard (Leduc and Texas hold'em, limit and no-limit) keep no
    selector: the RLCard game the bridge wrote says who moves (its `game_pointer`), and the
    AEC env's selection and legal moves (`next_legal_moves`, the mask `observe` gives) are
    set from that game's state for `player`. A written RLCard game whose player to move is
    not `player` is the bridge's mistake, and raises saying so."""
    game = env.unwrapped
    game.agents = game.possible_agents[:]
    game.rewards = dict.fromkeys(game.agents, 0)
    game._cumulative_rewards = dict.fromkeys(game.agents, 0)
    game.terminations = dict.fromkeys(game.agents, False)
    game.truncations = dict.fromkeys(game.agents, False)
    game.infos = {agent: {} for agent in game.agents}
    if hasattr(game, "_agent_selector"):
        _select(game._agent_selector, game.agents, player)
    elif _on_rlcard(game):
        _rlcard_turn(game, player)
    else:
        raise TypeError(
            f"fresh_turn: {type(game).__name__} has neither PettingZoo's `_agent_selector` nor "
            "an RLCard game (`env.get_state`, `next_legal_moves`); set its turn in the bridge"
        )
    game.agent_selection = game.agents[player]
    # The wrappers' own memory of the last turn (TerminateIllegalWrapper's flag and mask).
    layer = env.aec if hasattr(env, "aec") else env
    while layer is not game:
        for name, value in (("_terminated", False), ("_prev_obs", None), ("_prev_info", None)):
            if hasattr(layer, name):
                setattr(layer, name, value)
        layer = layer.env


def _select(selector: Any, agents: list[str], player: int) -> None:
    # PettingZoo's AgentSelector: `next()` moves to the entry after `_current_agent - 1`.
    selector.reinit(agents)
    selector._current_agent = (player + 1) % len(agents)
    selector.selected_agent = agents[player]


def _on_rlcard(game: Any) -> bool:
    """PettingZoo's RLCardBase (its card games): the RLCard env as `game.env`."""
    inner = getattr(game, "env", None)
    return hasattr(game, "next_legal_moves") and callable(getattr(inner, "get_state", None))


def _rlcard_turn(game: Any, player: int) -> None:
    moving = int(game.env.get_player_id())
    if moving != player:
        raise ValueError(
            f"fresh_turn: the written RLCard game has player {moving} to move, not {player}; "
            "write its `game_pointer` (and its round's) in the bridge, then give that player"
        )
    seen = game.env.get_state(player)
    # As RLCardBase.reset leaves them: the mover's legal moves, sorted, and its raw obs.
    game.next_legal_moves = sorted(seen["legal_actions"])
    game._last_obs = seen["obs"]


def is_aec(env: Any) -> bool:
    return all(hasattr(env, name) for name in ("agent_iter", "last", "possible_agents"))


def same_agents(env: Any, named: list[str], key: str) -> list[str]:
    """The PettingZoo env's `possible_agents`, which must be the spec's agents in order:
    every array per agent is indexed by that order."""
    found = list(env.possible_agents)
    if found != list(named):
        raise SpecError(
            f"key `{key}`: the reference's agents are {found}, the spec names "
            f"{list(named)}; list them in the reference's `possible_agents` order"
        )
    return found


class TurnBased:
    """A PettingZoo AEC env (the user's trusted reference) as reset/step over turns."""

    def __init__(self, aec: Any, players: list[str], actions: int) -> None:
        if not is_aec(aec):
            raise SpecError(
                "key `game`: the reference is not a PettingZoo AEC env (it has no "
                "`agent_iter`, `last` and `possible_agents`); `[game]` describes one"
            )
        found = same_agents(aec, players, "game.players")
        # PettingZoo prints a warning for every illegal move; the checks make thousands.
        from pettingzoo.utils.env_logger import EnvLogger

        EnvLogger.suppress_output()
        self.aec = aec
        self.players = found
        first = found[0]
        self.action_space = aec.action_space(first)
        if not isinstance(self.action_space, spaces.Discrete):
            raise SpecError(
                f"key `game`: {first}'s action space is {self.action_space}; turn-based "
                "games are checked with Discrete actions"
            )
        if int(self.action_space.n) != actions:
            raise SpecError(
                f"key `game.actions`: the reference's players have {int(self.action_space.n)} "
                f"actions, the spec says {actions}"
            )
        space = aec.observation_space(first)
        inner = space["observation"] if isinstance(space, spaces.Dict) else space
        self.observation_shape: tuple[int, ...] = tuple(inner.shape or ())
        size = int(np.prod(self.observation_shape)) + 1 + int(self.action_space.n)
        self.observation_space = spaces.Box(-(2**31), 2**31 - 1, (size,), np.int64)
        # Read by the reference's harness (a bridge reaches the game's fields through it).
        self.unwrapped = aec.unwrapped
        self.spec = None  # no Gymnasium registration, so no time limit

    # ---- the env interface the levels drive ----

    def reset(self, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        self.aec.reset(seed=seed, options=options)
        return self.turn(), {}

    def step(self, action: Any) -> tuple[np.ndarray, np.ndarray, bool, bool, dict]:
        self.aec.step(int(action))
        return (
            self.turn(),
            self.rewards(),
            self.ended("terminations"),
            self.ended("truncations"),
            {},
        )

    def close(self) -> None:
        self.aec.close()

    # ---- what a turn shows ----

    def current_player(self) -> int:
        return self.players.index(self.aec.agent_selection)

    def turn(self) -> np.ndarray:
        """The record after the last step: through `observe`, as `last()` reads it (a
        wrapper that checks legality keeps the mask it observed for the next step)."""
        seen = self.aec.observe(self.aec.agent_selection)
        if isinstance(seen, dict):
            observation, mask = seen["observation"], seen["action_mask"]
        else:
            observation, mask = seen, self.aec.infos[self.aec.agent_selection]["action_mask"]
        return turn_record(observation, self.current_player(), mask)

    def rewards(self) -> np.ndarray:
        """This step's reward of every player (0 for one the game has removed)."""
        rewards = self.aec.rewards
        return np.asarray([float(rewards.get(p, 0.0)) for p in self.players])

    def ended(self, kind: str) -> bool:
        return bool(any(getattr(self.aec, kind).values()))

    def legal_actions(self) -> list[int]:
        """The moves the player to move may make, from the mask its observation carries."""
        mask = self.turn()[-int(self.action_space.n) :]
        return [int(a) for a in np.flatnonzero(mask)]
