"""A target's table of the spec (`[targets.<name>]`): the port's modules in dependency
order, its probes, and what its code may use beyond the target's own allowlist."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from envport.tolerance import Tolerance


class _Strict(BaseModel):
    # A typo in a key is an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModuleSpec(_Strict):
    name: str
    exports: list[str] = Field(default_factory=list)
    depends_on: list[str] = Field(default_factory=list)
    # Export name -> signature and meaning: the interface contract prompts show the model.
    contract: dict[str, str] = Field(default_factory=dict)
    # What this module's own prompts add to the shared context: definitions of the
    # reference the slicer cut (`module.Class`) and folders of its package listed by file
    # (`package/folder`); envport.pipeline.sources.shown.
    shows: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError(f"expected a Python module name, got {value!r}")
        return value


class TargetSpec(_Strict):
    """The port's layout for one backend: modules in dependency order, `entry` last."""

    entry: str = "env"
    modules: list[ModuleSpec] = Field(default_factory=list)
    # Harness file (relative to the spec) defining L1 probes for module functions.
    probes: str | None = None
    # A Rust port's build: the crates it may depend on, and whether build scripts and
    # proc-macros (code that runs when the crate compiles) are allowed. Refused otherwise.
    allow_crates: list[str] = Field(default_factory=list)
    allow_build_code: bool = False
    # A Python port's imports beyond its target's allowlist (the static review,
    # envport.verifiers.source_review): a bridge's third-party package (`pgx`, `gymnax`),
    # which also admits its submodules. A Rust port's are its `allow_crates`.
    allow_imports: list[str] = Field(default_factory=list)
    # A narrower state domain this target's port covers (expressions in `state.valid`'s
    # language): L1 and L2 draw only states that meet them too, and every report says the
    # port was verified on that restriction. For a port whose representation holds part of
    # the reference's state space (a gridworld port that carries one object at most).
    domain: list[str] = Field(default_factory=list)
    # This target's own tolerances, field by field over the spec's `[tolerance]` (a float32
    # JAX port of a reference a float64 NumPy port matches bit for bit); `PortSpec.for_target`.
    tolerance: dict[str, Tolerance] = Field(default_factory=dict)

    @field_validator("domain")
    @classmethod
    def _domain_compiles(cls, value: list[str]) -> list[str]:
        for expression in value:
            try:
                compile(expression, "<domain>", "eval")
            except SyntaxError as error:
                raise ValueError(f"`{expression}`: not a Python expression: {error.msg}") from None
        return value

    @field_validator("allow_imports")
    @classmethod
    def _module_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not all(part.isidentifier() for part in name.split(".")):
                raise ValueError(f"expected a module name such as `pgx`, got {name!r}")
        return value
