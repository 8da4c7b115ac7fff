"""PortSpec: what to port, how to reach the reference's state, and how to judge the port.

A spec lives in `envport.toml`. Every validation problem becomes one `SpecError` line that
names the key and what is expected, so a user can fix the file without reading a traceback.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from envport.errors import SpecError
from envport.level_spec import L1Spec, L2Spec, L4Spec
from envport.parallel_spec import ParallelSpec
from envport.state_spec import LENGTH_SUFFIX, Bound, FieldSpec, GridSpec, StateSpec
from envport.target_spec import ModuleSpec, TargetSpec
from envport.tolerance import DEFAULT_ATOL, DEFAULT_RTOL, Tolerance, overridden
from envport.variant import base_folders, fill_in

# The state's declarations live in envport.state_spec, a target's in envport.target_spec,
# the budgets of L1, L2 and L4 in envport.level_spec, `[parallel]` in
# envport.parallel_spec; importers name them from here.
__all__ = [
    "DEFAULT_ATOL",
    "DEFAULT_RTOL",
    "LENGTH_SUFFIX",
    "Bound",
    "FieldSpec",
    "GridSpec",
    "L1Spec",
    "L2Spec",
    "L4Spec",
    "ModuleSpec",
    "ParallelSpec",
    "PortSpec",
    "SpecError",
    "StateSpec",
    "TargetSpec",
    "Tolerance",
    "load_spec",
]

SPEC_FILENAME = "envport.toml"
# The target registry's names (envport.targets.registry; the spec sits below it, so the
# names are repeated here, and tests/test_spec.py holds the two equal).
TARGETS = ("jax", "numpy", "rust")
PolicyName = Literal["uniform", "sticky", "biased", "legal", "greedy", "patient"]
POLICIES: tuple[PolicyName, ...] = ("uniform", "sticky", "biased")
# A turn-based game's default play: uniform over legal moves, a one-ply greedy player
# (a winning move when it has one), and uniform over every move (illegal ones included).
GAME_POLICIES: tuple[PolicyName, ...] = ("legal", "greedy", "patient", "uniform")


class _Strict(BaseModel):
    # A typo in a key is an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReferenceSpec(_Strict):
    entry: str = Field(description="`gymnasium:EnvId-v1` or `package.module:factory`")
    kwargs: dict[str, Any] = Field(default_factory=dict)
    sources: list[str] = Field(
        default_factory=list, description="modules whose text goes into prompts"
    )
    # Files of the reference's installed package whose text the prompts carry beside the
    # sources (`crafter/data.yaml`: the tables crafter.constants loads at import).
    data: list[str] = Field(default_factory=list)
    # Definitions the slicer leaves out although the code reaches them (`crafter.env.Env.render`:
    # the pixel image a port does not make), as `module.Name` or `module.Class.method`.
    cut: list[str] = Field(default_factory=list)
    # Black-box mode: a rules document (beside the spec) goes into prompts instead of any
    # reference source; the reference is then only the checks' oracle.
    rules: str | None = None

    @model_validator(mode="after")
    def _rules_or_sources(self) -> ReferenceSpec:
        shown = [key for key in ("sources", "data", "cut") if getattr(self, key)]
        if self.rules is not None and shown:
            raise ValueError(
                f"give `rules` or `{shown[0]}`, not both: a spec with a rules document never "
                "shows the reference's code"
            )
        return self

    @field_validator("entry")
    @classmethod
    def _entry_shape(cls, value: str) -> str:
        prefix, sep, rest = value.partition(":")
        if not sep or not prefix or not rest:
            raise ValueError("expected `gymnasium:EnvId-v1` or `package.module:factory`")
        return value


class L3Spec(_Strict):
    episodes: int = Field(default=100, gt=0)
    steps: int = Field(default=500, gt=0)
    mode: Literal["free", "resync", "both"] = "both"
    # Unset: POLICIES, or GAME_POLICIES for a turn-based game (`PortSpec.l3_policies`).
    policies: list[PolicyName] | None = Field(default=None, min_length=1)
    late_start_fraction: float = Field(default=0.2, ge=0, le=1)
    # A user's own policy, `pkg.mod:act` or `harness/file.py:act`: act(state, rng) -> action,
    # `state` the reference's state by field name. L3 plays it as one more policy beside
    # `policies` (closed loop), and l3.explore on half its steps.
    policy: str | None = None
    # Chaotic dynamics (Acrobot): a float32 port's free-running trajectory leaves a float64
    # reference's exponentially fast, so free-running steps are compared only up to this
    # many steps into each episode; resync still compares every step.
    free_horizon: int | None = Field(default=None, gt=0)


class LevelsSpec(_Strict):
    # Actions outside the declared space (L1, L2 and a share of L3's steps): Box actions up
    # to `out_of_range` half-widths beyond each bound, Discrete values the reference accepts.
    out_of_range: float = Field(default=3.0, ge=0)
    out_of_range_share: float = Field(default=0.2, ge=0, le=1)
    # Share of L1/L2 float draws at and around the reference's constants, zero and the
    # bounds.
    edge_share: float = Field(default=0.25, ge=0, le=1)
    # Of a check's drawn states, the share a port may refuse to hold (its `can_hold`) before
    # the check fails: below it the refusals are a gap, above it too little was compared.
    unheld_ceiling: float = Field(default=0.25, ge=0, le=1)
    l1: L1Spec = Field(default_factory=L1Spec)
    l2: L2Spec = Field(default_factory=L2Spec)
    l3: L3Spec = Field(default_factory=L3Spec)
    l4: L4Spec = Field(default_factory=L4Spec)


class RandomnessSpec(_Strict):
    """A stochastic step, split into drawing noise and a deterministic step given the noise
    (docs/design.md, contract 3). The harness file maps the draws the reference made during one
    step to the port's noise; the port's own sampler is checked by a two-sample test."""

    noise: Literal["categorical", "continuous"] = Field(
        description="categorical: integers 0..categories-1 (chi-square); continuous: KS"
    )
    harness: str = Field(description="file beside the spec defining `noise_from_draws`")
    # The object the reference draws from, as an attribute path from the env (like state
    # paths) when it is not the base env's `np_random`: MinAtar's games draw from their own
    # legacy RandomState (`unwrapped.game.env.random`).
    generator: str | None = Field(
        default=None,
        min_length=1,
        description="attribute path to a np.random.RandomState or Generator; default np_random",
    )
    categories: int | None = Field(default=None, ge=2)
    # The distribution test's design: the smallest shift it must detect (probability points
    # moved into one category, or KS distance), at this significance, with this power.
    shift: float = Field(default=0.05, gt=0, lt=1)
    alpha: float = Field(default=0.01, gt=0, lt=0.5)
    power: float = Field(default=0.95, gt=0.5, lt=1)
    samples: int | None = Field(default=None, gt=0, description="overrides the computed n")

    @model_validator(mode="after")
    def _categories(self) -> RandomnessSpec:
        if self.noise == "categorical" and self.categories is None:
            raise ValueError("categorical noise needs `categories` (the number of values)")
        return self


class OutOfScope(_Strict):
    """A branch of the reference that no check need exercise, and why (rendering, a step
    after the episode's end): matched by its line's source text, so it holds across the
    reference's releases, where line numbers move."""

    line: str = Field(min_length=1, description="the branch line's source text, or part of it")
    file: str | None = Field(default=None, description="the file's name, where two match")
    why: str = Field(min_length=1)


class CoverageSpec(_Strict):
    """Branch coverage of the reference's own source over the levels (docs/verification.md,
    "Coverage"), and the exploration that looks for the branches play did not reach."""

    enabled: bool = True
    # Reference steps the exploration may take (deterministic for a seed; 0: none).
    explore_steps: int = Field(default=20000, ge=0)
    # Steps one exploration rollout takes from an archived state before it picks again.
    explore_horizon: int = Field(default=40, gt=0)
    out_of_scope: list[OutOfScope] = Field(default_factory=list)


class ObservationSpec(_Strict):
    names: list[str] = Field(default_factory=list, description="one name per component")
    # The observation's first components are a grid (MiniGrid's egocentric image): `shape`
    # says how many and how they are laid out (C order).
    grid: GridSpec | None = None

    @field_validator("grid")
    @classmethod
    def _grid_shape(cls, value: GridSpec | None) -> GridSpec | None:
        if value is not None and (value.shape is None or value.marker is not None):
            raise ValueError("an observation grid needs `shape` and takes no `marker`")
        return value


class GameSpec(_Strict):
    """A turn-based game between players: the reference is a PettingZoo AEC env and the
    port has the pgx-style form (docs/port-contract.md, Two-player games)."""

    api: Literal["pettingzoo-aec"] = "pettingzoo-aec"
    # The seats in the reference's `possible_agents` order: `current_player` and the reward
    # vector index them.
    players: list[str] = Field(min_length=2)
    # The size of every player's Discrete action space (the legal-action mask's length).
    actions: int = Field(gt=0)
    # A harness function naming an action for the player to move (`harness/moves.py:name`,
    # `name(action, player) -> str`, chess's `e2e4`), so a divergence in the legal-action
    # mask reads `legal_action_mask[877 e2e4]`, not only the index.
    moves: str | None = None


class PortSpec(_Strict):
    name: str
    description: str = ""
    # A variant's base: the example it varies, whose files fill in what its folder lacks
    # (envport.variant; the base's spec is not merged into this one).
    base: str | None = None
    reference: ReferenceSpec
    state: StateSpec
    observation: ObservationSpec = Field(default_factory=ObservationSpec)
    targets: dict[str, TargetSpec] = Field(default_factory=dict)
    tolerance: dict[str, Tolerance] = Field(default_factory=dict)
    levels: LevelsSpec = Field(default_factory=LevelsSpec)
    randomness: RandomnessSpec | None = None
    coverage: CoverageSpec = Field(default_factory=CoverageSpec)
    game: GameSpec | None = None
    parallel: ParallelSpec | None = None
    # The spec file's directory, then its bases' (a variant's), where harness files named by
    # relative path are found (set by load_spec).
    _directory: Path | None = PrivateAttr(default=None)
    _folders: tuple[Path, ...] = PrivateAttr(default=())
    # Each harness file's path, found once per spec (a verify asks for the same few files
    # from many places; each search stats every folder of a variant's chain).
    _resolved: dict[str, Path] = PrivateAttr(default_factory=dict)

    @field_validator("targets")
    @classmethod
    def _known_targets(cls, value: dict[str, TargetSpec]) -> dict[str, TargetSpec]:
        for name, target in value.items():
            if name not in TARGETS:
                raise ValueError(f"unknown target `{name}`; expected one of {', '.join(TARGETS)}")
            names = [module.name for module in target.modules]
            if target.modules and target.entry not in names:
                raise ValueError(f"`{name}.entry` = {target.entry!r} is not one of its modules")
            if name == "rust" and target.allow_imports:
                raise ValueError("`rust.allow_imports`: a crate's imports are its `allow_crates`")
        return value

    @model_validator(mode="after")
    def _target_tolerances_override(self) -> PortSpec:
        # A target's tolerance replaces the spec's for a field `[tolerance]` names; a field
        # it does not name is a typo that would leave the port judged by the defaults.
        for name, target in self.targets.items():
            unknown = sorted(set(target.tolerance) - set(self.tolerance))
            if unknown:
                known = ", ".join(self.tolerance) or "none"
                raise ValueError(
                    f"key `targets.{name}.tolerance.{unknown[0]}` overrides no field of "
                    f"`[tolerance]` (it names {known}); add the field to `[tolerance]` first"
                )
        return self

    def for_target(self, name: str) -> PortSpec:
        """This spec as the checks of target `name` read it: the target's own tolerances
        laid over `[tolerance]` (`tolerance_for` then answers them, one lookup path)."""
        own = self.targets[name].tolerance if name in self.targets else {}
        if not own:
            return self
        # A copy keeps the private attributes: harness files resolve from the same folders.
        return self.model_copy(update={"tolerance": overridden(self.tolerance, own)})

    def tolerance_for(self, field: str) -> Tolerance:
        """Tolerance for a field (`obs.theta`, `physics[2]`): its own entry, else its base
        name's (`obs`, `physics`), else the default."""
        base = field.split("[")[0]
        # A game's per-player rewards (`rewards[player_0]`) take `reward`'s tolerance too,
        # and an agent's field (`agent_1.obs[4]`, `agent_1.reward`) the field's.
        also: tuple[str, ...] = ("reward",) if base == "rewards" else ()
        agent, _, rest = base.partition(".")
        if self.parallel is not None and agent in self.parallel.agents and rest:
            also = (rest, rest.split(".")[0])
        for candidate in (field, base, base.split(".")[0], *also):
            if candidate in self.tolerance:
                return self.tolerance[candidate]
        return Tolerance()

    def target(self, name: str) -> TargetSpec:
        return self.targets.get(name, TargetSpec())

    @property
    def l3_policies(self) -> list[str]:
        """The policies L3 plays: the spec's, else the defaults for its kind of env."""
        chosen = self.levels.l3.policies
        return list(chosen or (GAME_POLICIES if self.game else POLICIES))

    @property
    def folders(self) -> tuple[Path, ...]:
        """The spec's folder, then its bases' folders (a variant's), nearest first."""
        return self._folders or ((self._directory,) if self._directory is not None else ())

    def harness_file(self, relative: str) -> Path:
        """A harness file the spec names: in the spec's own folder, else its bases'."""
        if Path(relative).is_absolute() or not self.folders:
            return Path(relative)
        found = self._resolved.get(relative)
        if found is None:
            found = self._resolved[relative] = fill_in(self.folders, relative)
        return found

    @model_validator(mode="after")
    def _bounds_name_fields(self) -> PortSpec:
        unknown = set(self.state.bounds) - set(self.state.names)
        if self.state.names and unknown:
            raise ValueError(f"state.bounds names unknown state field `{sorted(unknown)[0]}`")
        unknown = set(self.state.from_observation) - set(self.state.names)
        if self.state.names and unknown:
            raise ValueError(
                f"state.from_observation names unknown state field `{sorted(unknown)[0]}`"
            )
        if self.game is not None and self.parallel is not None:
            raise ValueError(
                "give `[game]` (turns) or `[parallel]` (agents moving at once), not both"
            )
        turns = set(self.levels.l3.policies or ()) & {"legal", "greedy", "patient"}
        if turns and self.game is None:
            raise ValueError(
                f"levels.l3.policies: `{sorted(turns)[0]}` plays a turn-based game's legal "
                "moves; it needs a `[game]` table"
            )
        return self


def _location(loc: tuple[int | str, ...]) -> str:
    parts = [str(part) for part in loc]
    if parts[:2] == ["state", "declared"]:
        parts[1] = "fields"  # declarations are written as tables under `state.fields`
    return ".".join(parts) or "(top level)"


def _one_line(error: ValidationError) -> str:
    first = error.errors()[0]
    key = _location(first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        return f"key `{key}` is missing"
    if not first["loc"] and message.startswith("key `"):
        return message  # a check across tables names its own key
    if first["type"] == "extra_forbidden":
        return f"key `{key}` is not a spec key (check the spelling; see docs/spec.md)"
    got = first.get("input")
    shown = "" if isinstance(got, dict | list) else f" (got {got!r})"
    return f"key `{key}`: {message}{shown}"


def spec_path(path: str | Path) -> Path:
    """The `envport.toml` a user means: the path itself, or the file inside a directory."""
    candidate = Path(path)
    if candidate.is_dir():
        candidate = candidate / SPEC_FILENAME
    if not candidate.is_file():
        raise SpecError(f"{candidate}: no such spec file; pass a directory holding {SPEC_FILENAME}")
    return candidate


def load_spec(path: str | Path) -> PortSpec:
    """Read and validate a spec; raises SpecError with one line on any problem."""
    file = spec_path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{file}: not valid TOML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"{file}: cannot read: {error}") from None
    try:
        spec = PortSpec.model_validate(data)
    except ValidationError as error:
        raise SpecError(f"{file}: {_one_line(error)}") from None
    spec._directory = file.parent.resolve()
    spec._folders = base_folders(file, data)
    return spec
