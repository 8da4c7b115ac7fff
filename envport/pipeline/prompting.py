"""From run state and port files to rendered prompts (the templates' inputs live here).

Everything a prompt contains is a function of the spec, the run state and the port's files,
never of the clock or of paths that move, so a step run again after a resume renders the
same prompt and the response cache answers it.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from dataclasses import dataclass, field
from typing import Any

from envport.pipeline.field_meaning import field_descriptions
from envport.pipeline.observed import ObservedTypes, observe
from envport.pipeline.plan import RUST_ENTRY, contract_exports
from envport.pipeline.sources.reading import (
    ReferenceSource,
    read_rules,
    read_sources,
    slice_sources,
)
from envport.pipeline.sources.shown import shown_sources
from envport.prompts.render import Prompts, normalise_files
from envport.runs.state import COMPOSED, RunState
from envport.serve import toolchain
from envport.spec import PortSpec, Tolerance
from envport.targets.registry import target
from envport.verifiers.source_review.check import allowed_imports
from envport.verifiers.source_review.rules import PYTHON_IMPORTS, RUST_STD_MODULES


@dataclass(frozen=True)
class TargetInfo:
    name: str
    title: str
    contract: str
    # The template of the target's notes (the registry's `prompt_notes`).
    notes: str | None
    # What a stochastic env's port exports besides (rendered only for a stochastic spec).
    noise_contract: str = ""
    # How a module is a file ("{}.py", "src/{}.rs"), the code blocks' language tag, and
    # the endings of the file names an answer may write.
    module_file: str = "{}.py"
    language: str = "python"
    port_files: tuple[str, ...] = (".py",)
    # What the static review admits (envport.verifiers.source_review): a Python port's
    # imports, or a crate's `std` modules and the crates the spec allows.
    imports: tuple[str, ...] = ()
    crates: tuple[str, ...] = ()
    # The compiler that will build a crate (`1.85.0`), so a model writes what it compiles.
    compiler: str = ""

    def file(self, module: str) -> str:
        """The port file a module of the spec lives in."""
        return self.module_file.format(module)


# A two-player game's contract, per target (the class documenting it), and its notes.
GAME_ADAPTERS = {"jax": "JaxGame", "numpy": "NumpyGame"}
GAME_NOTES = "target_game.j2"
# The contract's paragraph for stochastic envs starts so; it runs to the next blank line.
NOISE_PARAGRAPH = re.compile(r"^A stochastic env's .*?(?=\n\s*\n|\Z)", re.MULTILINE | re.DOTALL)
# The docstring cites the design document, which the model never sees.
CITATION = re.compile(r" ?\(docs/[\w./-]+, contract \d+\)")


def target_info(name: str, game: bool = False) -> TargetInfo:
    chosen = target(name)
    # The backend's own docstring is the contract the worker enforces: one source of truth.
    # A two-player game's port has the form of its game adapter (envport.targets.game_port).
    module: Any = importlib.import_module(f"envport.targets.{name}_port")
    if game and name in GAME_ADAPTERS:
        module = getattr(importlib.import_module("envport.targets.game_port"), GAME_ADAPTERS[name])
    doc = CITATION.sub("", inspect.cleandoc(module.__doc__ or ""))
    contract = "\n".join(doc.splitlines()[1:]).strip() or doc
    noise = NOISE_PARAGRAPH.search(contract)
    if noise is not None:
        contract = (contract[: noise.start()] + contract[noise.end() :]).strip()
    noise_contract = noise.group(0).strip() if noise is not None else ""
    return TargetInfo(
        name,
        chosen.title,
        contract,
        GAME_NOTES if game and name in GAME_ADAPTERS else chosen.prompt_notes,
        noise_contract=noise_contract,
        module_file=chosen.module_file,
        language=chosen.language,
        port_files=chosen.port_files,
        imports=PYTHON_IMPORTS.get(name) or tuple(sorted(RUST_STD_MODULES)),
    )


def prompt_builder(spec: PortSpec, target: str, prompts_dir: str | None) -> PromptBuilder:
    """The builder of a run's prompts: the templates, the reference's source (or rules) and
    its types, measured by stepping the reference."""
    sources, rules = read_sources(spec), read_rules(spec)
    info = target_info(target, game=spec.game is not None)
    if info.language == "python":  # the spec may extend the review's allowlist
        info = dataclasses.replace(info, imports=allowed_imports(spec, target))
    else:
        toolchain.require_rust()  # a compiler too old for any port: refused before any call
        info = dataclasses.replace(
            info,
            crates=tuple(spec.target(target).allow_crates),
            compiler=toolchain.rust_version() or f"{toolchain.MINIMUM_RUST} or newer",
        )
    # The prompts state the tolerances this target's port is judged by (its own over the spec's).
    seen = spec.for_target(target)
    return PromptBuilder(Prompts(prompts_dir), seen, sources, info, rules, observe(spec))


@dataclass
class PromptBuilder:
    prompts: Prompts
    spec: PortSpec
    sources: list[ReferenceSource]
    target: TargetInfo
    # A black-box spec's rules document: rendered in place of the (then empty) sources.
    rules: str | None = None
    # The reference's value types, measured (observed.py); None renders no types.
    observed: ObservedTypes | None = None
    # `sources` cut to what a port needs; the whole ones go to a repair that is stuck.
    sliced: list[ReferenceSource] = field(init=False)

    def __post_init__(self) -> None:
        self.sliced = slice_sources(self.spec, self.sources)
        # Each module's `shows`, read once, now: a name that is none stops before any model
        # call, and every request of the module reuses what was read.
        self._shown: dict[str, list[ReferenceSource]] = {}
        if self.target.name in self.spec.targets:
            for module in self.spec.target(self.target.name).modules:
                key = f"targets.{self.target.name}.modules.{module.name}.shows"
                if module.shows:
                    self._shown[module.name] = shown_sources(self.sources, module.shows, key)

    def shown(self, module: str) -> list[ReferenceSource]:
        """What a module's own prompts add to the context (its `shows`)."""
        return self._shown.get(module, [])

    def system(self) -> str:
        return self.prompts.render("system.j2", target=self.target)

    def context(self, state: RunState) -> str:
        return self.prompts.render(
            "context.j2",
            spec=self.spec,
            target=self.target,
            sources=self.sliced,
            rules=self.rules,
            modules=state.modules,
            entry=state.entry,
            tolerances=list(self.spec.tolerance.items()),
            default_tolerance=Tolerance(),
            state_fields=list(self.spec.state.fields.items()),
            observation_names=self.spec.observation.names,
            parallel=self.spec.parallel,
            observed=self.observed,
            field_types=dict(self.observed.fields) if self.observed else {},
            descriptions=field_descriptions(self.spec, self.observed),
            randomness=self.spec.randomness,
            # Which lines apply to this spec (measured on the reference; all of them when
            # the types were not measured).
            box_actions=self.observed.box_actions if self.observed else True,
            float_state=self.observed.float_state if self.observed else True,
            kept_across_reset=self.observed.kept_across_reset if self.observed else (),
            time_limit=(
                self.observed.time_limit
                if self.observed
                else self.spec.state.step_counter is not None
            ),
            module_files={m.name: self.target.file(m.name) for m in state.modules},
        )

    def plan(self, state: RunState) -> str:
        return self.prompts.render(
            "plan.j2",
            target=self.target,
            contract=contract_exports(self.target.name, self.spec.game is not None),
            notes=state.notes,
            entry=RUST_ENTRY if self.target.name == "rust" else "env",
        )

    def generate(self, state: RunState, files: dict[str, str]) -> tuple[str, list[str]]:
        module = state.modules[state.module_index]
        earlier = {self.target.file(m.name) for m in state.modules[: state.module_index]}
        shown = {path: text for path, text in files.items() if path in earlier}
        text = self.prompts.render(
            "generate.j2",
            module=module,
            module_file=self.target.file(module.name),
            position=state.module_index + 1,
            modules=state.modules,
            entry=state.entry,
            files=normalise_files(shown),
            notes=state.notes,
            example_path=self.target.file(module.name),
            target=self.target,
            manifest=self._manifest_owed(state, files),
            shown=self.shown(module.name),
        )
        return text, [self.target.file(module.name), *self._manifest_owed(state, files)]

    def _manifest_owed(self, state: RunState, files: dict[str, str]) -> list[str]:
        """A crate's manifest is written with its entry module, unless it exists already."""
        module = state.modules[state.module_index]
        owed = self.target.name == "rust" and module.name == state.entry
        return ["Cargo.toml"] if owed and "Cargo.toml" not in files else []

    def repair(self, state: RunState, files: dict[str, str]) -> str:
        stuck = state.stuck if state.stuck.context_added else None
        if state.phase == "modules" and stuck is None:
            # The module and what it imports; the whole port once the loop is stuck.
            upto = {self.target.file(m.name) for m in state.modules[: state.module_index + 1]}
            # A crate's manifest belongs to every module.
            shown = {p: text for p, text in files.items() if p in upto or p == "Cargo.toml"}
        else:
            shown = dict(files)
        expected = (
            [self.target.file(state.scope)]
            if state.phase == "modules"
            else [self.target.file(m.name) for m in state.modules]
        )
        scope_title = (
            "the whole port against the reference"
            if state.scope == COMPOSED
            else f"module `{state.scope}`"
        )
        return self.prompts.render(
            "repair.j2",
            iteration=state.iteration,
            scope_title=scope_title,
            failures=state.open_failures,
            notes=state.notes,
            stuck=stuck,
            history=state.history,
            files=normalise_files(shown),
            missing=[path for path in expected if path not in files],
            example_path=expected[0] if expected else self.target.file(state.entry),
            # Widened context: the reference whole, cut parts included (only when sliced).
            whole_sources=self.sources if stuck and self.sliced != self.sources else [],
            target=self.target,
            edit_format=True,
            shown=self._shown_in_repair(state),
        )

    def _shown_in_repair(self, state: RunState) -> list[ReferenceSource]:
        """A module's repair shows what its generate request showed (its `shows`)."""
        if state.phase != "modules":
            return []
        module = next((m for m in state.modules if m.name == state.scope), None)
        return self.shown(module.name) if module is not None else []

    def optimize(self, state: RunState, files: dict[str, str]) -> str:
        """The optimise prompt: the bench numbers, the rule, earlier rounds, the checklist."""
        from envport.pipeline.optimize import human

        settings, progress = state.optimize, state.optimization
        speeds = [
            {"batch": batch, "sps": f"{sps:,.0f} ({human(sps)})"}
            for batch, sps in sorted(progress.sps.items())
        ]
        attempts = [
            f"round {a.round}: {'kept' if a.kept else 'reverted'}: {a.why}"
            for a in progress.attempts
        ]
        return self.prompts.render(
            "optimize.j2",
            round=progress.rounds_done + 1,
            rounds=settings.rounds,
            target=self.target,
            steps=settings.steps,
            repeats=settings.repeats,
            speeds=speeds,
            largest=settings.largest,
            threshold=1 + settings.min_gain,
            gain_percent=f"{settings.min_gain * 100:g}",
            attempts=attempts,
            notes=state.notes,
            files=normalise_files(files),
            example_path=sorted(files)[0] if files else self.target.file(state.entry),
            edit_format=True,
        )

    def reask(
        self, error: str, truncated: bool, required: list[str], plan: bool, edits: bool = False
    ) -> str:
        return self.prompts.render(
            "reask.j2",
            error=error,
            truncated=truncated,
            required=required,
            plan=plan,
            edit_format=edits,
        )
