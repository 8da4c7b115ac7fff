"""The `[state]` table of a spec: how the harness reaches the reference's state, and the
structure of that state (docs/structured-state.md): fields by attribute path or bridge,
declared lists with a capacity, enums with their codes, bounds and validity constraints.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Strict(BaseModel):
    # A typo in a key is an error, not a silently ignored setting (as in envport.spec).
    model_config = ConfigDict(extra="forbid", frozen=True)


class Bound(_Strict):
    """Where L1 and L2 draw a state field from: scalars or one value per component."""

    low: float | list[float]
    high: float | list[float]
    integer: bool = False

    @field_validator("low", "high", mode="before")
    @classmethod
    def _flattened(cls, value: Any) -> Any:
        """A grid field's bounds may be written nested as the field is shaped ([[0, 0],
        [0, 0]]); they are kept flat, in C order, as one value per component."""
        if not isinstance(value, list) or not any(isinstance(v, list) for v in value):
            return value
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                "nested bounds must be rectangular lists of numbers, one per component"
            ) from None
        return array.reshape(-1).tolist()

    @model_validator(mode="after")
    def _ordered(self) -> Bound:
        low, high = np.broadcast_arrays(np.asarray(self.low), np.asarray(self.high))
        if np.any(low > high):
            raise ValueError("expected `low` <= `high` for every component")
        return self


# Keys of a field declaration: a table under `state.fields` holding any of them declares one
# field; a table holding none of them is a group of fields (a level of the state's pytree).
DECLARATION_KEYS = ("path", "kind", "capacity", "dtype", "enum", "items", "pad", "record")
# The leaf beside a list field's items holding how many of them are in use.
LENGTH_SUFFIX = ".length"


class FieldSpec(_Strict):
    """One declared leaf of a structured state (docs/structured-state.md).

    A `value` is an array or scalar as the reference holds it; a `list` is a variable-length
    collection (a hand of cards) that becomes `capacity` items, padded with `pad`, plus a
    `<name>.length` leaf, so a JAX port keeps static shapes. `enum` names the categorical
    codes the values take (draws use the codes, reports the names).
    """

    path: str | None = Field(default=None, description="attribute path; none with a bridge")
    kind: Literal["value", "list"] = "value"
    capacity: int | None = Field(default=None, gt=0)
    dtype: Literal["int", "float", "bool"] | None = None
    enum: str | None = None
    # Where L1 and L2 draw a list's items from (an enum's codes when not given).
    items: Bound | None = None
    pad: float = 0
    # A list of records (`[x, y, right, timer]` each): the names of a record's numbers, so a
    # divergence names the object and its field (`e_subs[2].x`). Its `items` bounds give
    # one bound per name.
    record: list[str] | None = None

    @model_validator(mode="after")
    def _shape(self) -> FieldSpec:
        if self.kind == "list" and self.capacity is None:
            raise ValueError("a `list` field needs `capacity` (the most items it can hold)")
        if self.kind != "list" and (self.capacity is not None or self.items is not None):
            raise ValueError('`capacity` and `items` are for `kind = "list"` fields only')
        if self.record is not None and (
            self.kind != "list" or self.item_shape != (len(self.record),)
        ):
            raise ValueError(
                "`record` names the numbers of a list's items: give `items` bounds with one "
                "number per name"
            )
        if self.path is not None and any(not p.isidentifier() for p in self.path.split(".")):
            raise ValueError(f"expected a dotted attribute path, got {self.path!r}")
        return self

    @property
    def item_shape(self) -> tuple[int, ...]:
        """A list item's shape: () for a card, (5,) for a record `[x, y, right, timer,
        shot]`, taken from the `items` bounds (a list of numbers is a record)."""
        return tuple(np.shape(self.items.low)) if self.items is not None else ()

    @property
    def numpy_dtype(self) -> Any:
        dtype = self.dtype or ("int" if self.enum else None)
        return {"int": np.int64, "float": np.float64, "bool": np.bool_, None: None}[dtype]


def _flatten_fields(
    tree: dict[str, Any], prefix: str = ""
) -> tuple[dict[str, str], dict[str, FieldSpec | dict]]:
    """Nested tables of `state.fields` as leaf paths (`hand.player`): attribute paths, and
    declarations (validated later, so an error names the key)."""
    paths: dict[str, str] = {}
    declared: dict[str, FieldSpec | dict] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and not set(value) & set(DECLARATION_KEYS):
            inner_paths, inner_declared = _flatten_fields(value, f"{name}.")
            paths |= inner_paths
            declared |= inner_declared
        elif isinstance(value, dict | FieldSpec):
            declared[name] = value
            path = value.get("path") if isinstance(value, dict) else value.path
            if path is not None:
                paths[name] = path
        else:
            paths[name] = value
    return paths, declared


class GridSpec(_Strict):
    """A grid of cells, indexed [x][y] with each cell's codes on the last axis (MiniGrid's
    (type, colour, state)): a state field, or the observation's first components. The HTML
    report draws the reference's and the port's side by side at a divergence."""

    # [X, Y] or [X, Y, C]; required for the observation (a flat array), else read off the
    # value; a state field held flat is read in this shape (chess's 64 squares as [8, 8]).
    shape: list[int] | None = Field(default=None, min_length=2, max_length=3)
    channels: list[str] = Field(default_factory=list, description="names of the last axis")
    # Channel -> the name of each code (code i is names[i]), for labels and tooltips.
    codes: dict[str, list[str]] = Field(default_factory=dict)
    # A state field holding (x, y) of a cell to mark (the agent); not for the observation.
    marker: str | None = None
    # "xy": the first axis runs across (MiniGrid's grid[x][y]); "yx": the first axis runs
    # down, rows first (an image's [row][column], MinAtar's planes).
    axes: Literal["xy", "yx"] = "xy"
    # Each channel a plane of its own, 0 or 1 (MinAtar's paddle, ball, trail, brick): a cell
    # shows which are set, a divergence reads `obs[3][5].ball: expected set, got clear`.
    planes: bool = False

    @model_validator(mode="after")
    def _known_channels(self) -> GridSpec:
        unknown = set(self.codes) - set(self.channels)
        if unknown:
            raise ValueError(f"`codes` names `{sorted(unknown)[0]}`, which is not in `channels`")
        if self.planes and (not self.channels or self.codes):
            raise ValueError(
                "a grid of `planes` names each plane in `channels` and takes no `codes`"
            )
        if self.shape is not None and min(self.shape) < 1:
            raise ValueError("expected a `shape` of positive sizes")
        return self


class ReachedSpec(_Strict):
    """`[state.reached]`: L1 and L2 draw start states from states the reference reaches
    itself (envport.verifiers.draws.reached), for a state space no bounds describe."""

    episodes: int = Field(gt=0, description="episodes the reference plays for them")
    # Steps each may take (default `levels.l3.steps`): a game's rules of its late play (a
    # fifty-move claim, a bare king, a stalemate) live past the rollouts' length.
    steps: int | None = Field(default=None, gt=0)
    # A book of start states where rare rules decide (`harness/book.py:positions`: a
    # generator that puts the reference env given to it into each in turn, through the state
    # bridge, and yields): from each, every action (a game's legal ones) is played `depth`
    # plies deep (envport.verifiers.draws.book).
    book: str | None = None
    depth: int = Field(default=1, ge=1, le=3)
    # Of L1's and L2's drawn states, the share taken from them (the rest from the fields).
    share: float = Field(default=1.0, gt=0.0, le=1.0)


class StateSpec(_Strict):
    """How the harness reads and writes the reference's state.

    Either `fields` (name -> attribute path on the env that `make` returns; `unwrapped.x`
    reaches the base env) or a `read`/`write` bridge (`package.module:function`). A field may
    be a table declaring its structure (FieldSpec); nested tables group fields into a pytree
    whose leaves are named by dotted path. `fields` keeps name -> path for every field with a
    path; `declared` holds the declarations.
    """

    fields: dict[str, str] = Field(default_factory=dict)
    declared: dict[str, FieldSpec] = Field(default_factory=dict)
    # Enum name -> {code name: code}: categorical values (card ranks, object types, colours).
    enums: dict[str, dict[str, int]] = Field(default_factory=dict)
    # Python expressions over the fields a drawn state must satisfy (`sum(hand.player) <=
    # 21`); a list field reads as its items in use. Draws failing one are not made.
    valid: list[str] = Field(default_factory=list)
    # Fields that are functions of the others (`current_player = "pieces(board, 1) -
    # pieces(board, 2)"`): each drawn state gets them from these expressions, in order (each
    # sees those before it), before `valid` is asked. Derivation, not rejection: a rule the
    # game keeps (the mover from the piece counts) costs no draws.
    derive: dict[str, str] = Field(default_factory=dict)
    # Numbers a start state is summed up by, each a Python expression in `valid`'s language
    # (`trees = "int((mat_map == 6).sum())"`): l2.reset compares each as a component of its
    # own (`summary.trees`), so a generated world whose cells are each drawn right but whose
    # counts, shapes or placements are not is seen at a sample size a per-cell test misses.
    summaries: dict[str, str] = Field(default_factory=dict)
    # A harness file beside the spec whose functions the `valid` expressions may call (a
    # game's "no four in a row yet" is a loop, not an expression).
    helpers: str | None = None
    read: str | None = None
    write: str | None = None
    step_counter: str | None = Field(
        default=None, description="state field counting steps; lets L3 start near the time limit"
    )
    # The state space L1 and L2 draw from: wider than what rollouts visit, on purpose.
    bounds: dict[str, Bound] = Field(default_factory=dict)
    # Or states the reference reaches in play, where bounds cannot draw one (a chess position).
    reached: ReachedSpec | None = None
    # Reverse injection (a port that cannot load a state): state field -> the components of
    # the flattened observation that hold it. Declares the observation the port's state, so
    # its start and every state it reaches can be written into the reference; fields not
    # named keep the reference's own value after its reset (a step counter starts at 0).
    from_observation: dict[str, list[int]] = Field(default_factory=dict)
    # What each field's values mean (codes, the value meaning "none", units, which end of a
    # list is dealt first): shown to the model beside the field, since a bridged field's
    # type alone ("int64 array") does not say it. Keys are state fields, or a group of them.
    describe: dict[str, str] = Field(default_factory=dict)
    # State fields that are grids of cells (drawn as pictures in the HTML report).
    grids: dict[str, GridSpec] = Field(default_factory=dict)
    # State fields holding one cell's codes (a carried object's type, colour, state): their
    # channels and code names, so a divergence reads `carrying.type: expected key, got ball`.
    cells: dict[str, GridSpec] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _structured(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "fields" not in data:
            return data
        if not isinstance(data["fields"], dict):
            return data
        fields = dict(data["fields"])
        # A spec dumped by `model_dump` (a test's, a run's copy) carries its declarations
        # beside the flat paths: fold them back in so the dump loads as it was.
        for name, declaration in dict(data.get("declared") or {}).items():
            if not isinstance(declaration, dict | FieldSpec):
                raise ValueError("declare a field's structure as a table under `state.fields`")
            fields[name] = declaration
        paths, declared = _flatten_fields(fields)
        return {**data, "fields": paths, "declared": declared}

    @model_validator(mode="after")
    def _declarations(self) -> StateSpec:
        for name, field in self.declared.items():
            if field.path is None and not (self.read and self.write):
                raise ValueError(f"field `{name}`: give `path`, or `read` and `write` bridges")
            if field.enum is not None and field.enum not in self.enums:
                raise ValueError(f"field `{name}`: unknown enum `{field.enum}` (see state.enums)")
            if field.kind == "list" and name in self.bounds:
                raise ValueError(
                    f"field `{name}` is a list: give its items' bounds as `items` in its table"
                )
            if f"{name}{LENGTH_SUFFIX}" in self.fields or f"{name}{LENGTH_SUFFIX}" in self.declared:
                raise ValueError(f"field `{name}{LENGTH_SUFFIX}` clashes with `{name}`'s length")
        for name, codes in self.enums.items():
            if not codes or len(set(codes.values())) != len(codes):
                raise ValueError(f"enum `{name}`: expected distinct integer codes, one per name")
        for expression in self.valid:
            try:
                compile(expression, "<state.valid>", "eval")
            except SyntaxError as error:
                raise ValueError(f"`{expression}`: not a Python expression: {error.msg}") from None
        self._derivable()
        for name, expression in self.summaries.items():
            _expression(f"summaries.{name}", expression)
        return self

    def _derivable(self) -> None:
        """`derive` names fields L1 and L2 draw, each with a Python expression."""
        drawn = set(self.names) | set(self.bounds)
        for name, expression in self.derive.items():
            if name not in drawn:
                raise ValueError(
                    f"`derive.{name}`: no such state field; derive one of "
                    f"{', '.join(sorted(drawn)) or '(none declared)'}"
                )
            _expression(f"derive.{name}", expression)

    @property
    def names(self) -> list[str]:
        """Every field's name: those with attribute paths, then those only declared."""
        return [*self.fields, *(n for n in self.declared if n not in self.fields)]

    @field_validator("from_observation")
    @classmethod
    def _components(cls, value: dict[str, list[int]]) -> dict[str, list[int]]:
        for name, components in value.items():
            if not components or min(components) < 0:
                raise ValueError(
                    f"field `{name}`: expected a non-empty list of observation components "
                    f"(indices from 0), got {components!r}"
                )
        return value

    @field_validator("fields")
    @classmethod
    def _paths(cls, value: dict[str, str]) -> dict[str, str]:
        for name, path in value.items():
            if not path or any(not part.isidentifier() for part in path.split(".")):
                raise ValueError(f"field `{name}`: expected a dotted attribute path, got {path!r}")
        return value


def _expression(key: str, expression: str) -> None:
    """A `derive` or `summaries` value must be one Python expression."""
    try:
        compile(expression, f"<state.{key}>", "eval")
    except SyntaxError as error:
        problem = f"`{key} = {expression!r}`: not a Python expression: {error.msg}"
        raise ValueError(problem) from None
