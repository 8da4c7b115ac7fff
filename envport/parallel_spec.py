"""`[parallel]`: agents moving at once (a PettingZoo Parallel env seen as one env of joint
actions; envport.targets.simultaneous), and how their observations are laid out when they
differ in length."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    # A typo in a key is an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid", frozen=True)


class ParallelSpec(_Strict):
    """Agents moving at once: the reference is a PettingZoo Parallel env, seen as one env
    whose action is the joint action and whose outputs are per agent (docs/spec.md, Agents
    moving at once; envport.targets.simultaneous)."""

    api: Literal["pettingzoo-parallel"] = "pettingzoo-parallel"
    # The agents in the reference's `possible_agents` order: the joint action's entries, the
    # observation's rows and the reward vector follow it, and divergences name them.
    agents: list[str] = Field(min_length=1)
    # Each agent's observation length, in `agents` order, for agents whose flat observations
    # differ in length (mpe2's simple_tag: adversaries 16, the runner 14). The stacked
    # observation is then [n_agents, the longest]: a shorter agent's row is padded past its
    # length, and the padding is never compared. Declared, not read from the reference,
    # because the port is held to it and the comparison names rows without the reference.
    observation_sizes: list[int] | None = None
    # Each agent's observation names when they differ by agent (one list per agent, as long
    # as its observation): `adversary_0.obs[8] (adversary_1.x rel)`. An agent named here
    # takes these in place of `[observation] names`.
    observation_names: dict[str, list[str]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _layout_fits_agents(self) -> ParallelSpec:
        sizes = self.observation_sizes
        if sizes is not None:
            if len(sizes) != len(self.agents):
                raise ValueError(
                    f"`observation_sizes`: {len(sizes)} lengths for "
                    f"{len(self.agents)} agents; give one per agent, in `agents` order"
                )
            if min(sizes) <= 0:
                raise ValueError(
                    "`observation_sizes`: every length is at least 1 "
                    "(each agent's observation_space(agent).shape[0])"
                )
        for agent, names in self.observation_names.items():
            if agent not in self.agents:
                raise ValueError(
                    f"`observation_names.{agent}`: no such agent; "
                    f"the agents are {', '.join(self.agents)}"
                )
            size = self.size_of(agent)
            if size is not None and len(names) != size:
                raise ValueError(
                    f"`observation_names.{agent}`: {len(names)} names for an "
                    f"observation of {size}; give one name per component"
                )
        return self

    def size_of(self, agent: str) -> int | None:
        """The agent's declared observation length, None when the agents share one shape."""
        if self.observation_sizes is None:
            return None
        return self.observation_sizes[self.agents.index(agent)]
