"""Reference episodes as L3 keeps them: columnar, one row per transition.

Row r of every array is one transition; episodes sit back to back and `lengths` says where
each ends. This is the shape the port's batched requests, the wire and the vectorised
judging all want, so episodes are never held as per-step Python objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from envport.verifiers.draws.policies import EpisodePlan
from envport.verifiers.reporting.compare import Steps

State = dict[str, np.ndarray]


@dataclass
class Played:
    plans: list[EpisodePlan]
    lengths: np.ndarray  # steps of each episode, [E]
    states: State  # the state before each step, [N, ...] per field
    actions: np.ndarray  # [N, ...]
    steps: Steps  # what each step returned, [N, ...]
    # A stochastic env: each step's noise, mapped from the reference's draws, [N, ...].
    noise: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.plans)

    @classmethod
    def episode(
        cls, plan: EpisodePlan, states: list[State], actions: list[Any], outputs: list[Any]
    ) -> Played:
        """One episode played step by step on the reference: the state before each step,
        the action, and what the step returned (a `Transition`; its noise when stochastic)."""
        drawn = [o.noise for o in outputs if o.noise is not None]
        return cls(
            [plan],
            np.asarray([len(outputs)], dtype=np.int64),
            {name: np.array([s[name] for s in states]) for name in states[0]},
            np.asarray(actions[: len(outputs)]),
            Steps(
                np.stack([o.obs for o in outputs]),
                np.asarray([o.reward for o in outputs]),
                np.asarray([o.terminated for o in outputs]),
                np.asarray([o.truncated for o in outputs]),
            ),
            # A stochastic env: the port replays the episode through the reference's noise.
            np.stack(drawn) if drawn and len(drawn) == len(outputs) else None,
        )

    @property
    def transitions(self) -> int:
        return int(self.lengths.sum())

    @property
    def starts(self) -> np.ndarray:
        """The row where each episode begins."""
        return np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)

    @property
    def ends(self) -> np.ndarray:
        """Each episode's last row."""
        return np.cumsum(self.lengths).astype(np.int64) - 1

    def state_at(self, row: int) -> State:
        return {name: values[row] for name, values in self.states.items()}

    def endings(self) -> dict[str, int]:
        """How the episodes ended: what the level actually exercised."""
        ends = self.ends
        terminated = self.steps.terminated[ends].astype(bool)
        truncated = self.steps.truncated[ends].astype(bool)
        counts = {
            "terminated": int((terminated & ~truncated).sum()),
            "truncated": int((truncated & ~terminated).sum()),
            "both": int((terminated & truncated).sum()),
            "step limit": int((~terminated & ~truncated).sum()),
        }
        return {name: count for name, count in counts.items() if count}

    def within(self, horizon: int | None) -> Played:
        """Each episode cut to its first `horizon` steps: L3's free-running horizon.

        A float32 port of a chaotic float64 reference (Acrobot) leaves the reference's
        trajectory exponentially fast whatever its correctness, so past some step a
        free-running comparison says nothing about the port. `[levels.l3] free_horizon = N`
        cuts free-running mode to each episode's first N steps; resync, which re-injects
        the state every step, still compares every step of every episode."""
        if horizon is None or int(self.lengths.max(initial=0)) <= horizon:
            return self
        offset = np.arange(len(self.actions)) - np.repeat(self.starts, self.lengths)
        return self._rows(offset < horizon, np.minimum(self.lengths, horizon))

    def _rows(self, keep: np.ndarray, lengths: np.ndarray) -> Played:
        return Played(
            self.plans,
            lengths,
            {name: values[keep] for name, values in self.states.items()},
            self.actions[keep],
            Steps(*(part[keep] for part in self.steps.parts())),
            None if self.noise is None else self.noise[keep],
        )

    def padded_actions(self) -> np.ndarray:
        """[E, T] actions, each episode padded with its last action to the longest one
        (nothing past an episode's end is compared)."""
        return _padded(self.actions, self.starts, self.lengths)

    def padded_noise(self) -> np.ndarray | None:
        return None if self.noise is None else _padded(self.noise, self.starts, self.lengths)

    def start_states(self) -> State:
        starts = self.starts
        return {name: values[starts] for name, values in self.states.items()}

    @staticmethod
    def join(parts: list[Played]) -> Played:
        return Played(
            [plan for part in parts for plan in part.plans],
            np.concatenate([part.lengths for part in parts]),
            {name: np.concatenate([p.states[name] for p in parts]) for name in parts[0].states},
            np.concatenate([part.actions for part in parts]),
            Steps.join([p.steps for p in parts]),
            None if parts[0].noise is None else np.concatenate([p.noise for p in parts]),
        )

    # ---- over the wire: a reference worker plays a share and sends it whole ----

    def to_wire(self) -> dict[str, Any]:
        return {
            "plans": [[p.index, p.reset_seed, p.policy, p.late_start] for p in self.plans],
            "lengths": self.lengths,
            "states": self.states,
            "actions": self.actions,
            "obs": self.steps.obs,
            "reward": self.steps.reward,
            "terminated": self.steps.terminated,
            "truncated": self.steps.truncated,
            "noise": self.noise,
        }

    @classmethod
    def from_wire(cls, packed: dict[str, Any]) -> Played:
        return cls(
            [EpisodePlan(*plan) for plan in packed["plans"]],
            np.asarray(packed["lengths"], dtype=np.int64),
            packed["states"],
            np.asarray(packed["actions"]),
            Steps.of(packed),
            packed.get("noise"),
        )


def _padded(rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    longest = int(lengths.max(initial=1))
    offset = np.minimum(np.arange(longest)[None, :], (lengths - 1)[:, None])
    return rows[starts[:, None] + offset]
