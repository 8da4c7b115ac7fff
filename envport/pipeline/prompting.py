"""From run state and port files to rendered prompts (the templates' inputs live here).

Everything a prompt contains is a function of the spec, the run state and the port's files,
never of the clock or of paths that move, so a step run again after a resume renders the
same prompt and the response cache answers it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from envport.pipeline.plan import CONTRACT
from envport.pipeline.sources import ReferenceSource
from envport.prompts.render import Prompts, normalise_files
from envport.runs.state import COMPOSED, RunState
from envport.spec import PortSpec, Tolerance
from envport.targets.registry import target


@dataclass(frozen=True)
class TargetInfo:
    name: str
    title: str
    contract: str
    # The template of the target's notes (the registry's `prompt_notes`; none for a target
    # translate does not generate, such as Rust, whose ports are only optimised).
    notes: str | None


def target_info(name: str) -> TargetInfo:
    chosen = target(name)
    # The backend's own docstring is the contract the worker enforces: one source of truth.
    module = importlib.import_module(f"envport.targets.{name}_port")
    doc = (module.__doc__ or "").strip()
    contract = "\n".join(doc.splitlines()[1:]).strip() or doc
    return TargetInfo(name, chosen.title, contract, chosen.prompt_notes)


@dataclass
class PromptBuilder:
    prompts: Prompts
    spec: PortSpec
    sources: list[ReferenceSource]
    target: TargetInfo
    # A black-box spec's rules document: rendered in place of the (then empty) sources.
    rules: str | None = None

    def system(self) -> str:
        return self.prompts.render("system.j2", target=self.target)

    def context(self, state: RunState) -> str:
        return self.prompts.render(
            "context.j2",
            spec=self.spec,
            target=self.target,
            sources=self.sources,
            rules=self.rules,
            modules=state.modules,
            entry=state.entry,
            tolerances=list(self.spec.tolerance.items()),
            default_tolerance=Tolerance(),
            state_fields=list(self.spec.state.fields.items()),
            observation_names=self.spec.observation.names,
        )

    def plan(self, state: RunState) -> str:
        return self.prompts.render(
            "plan.j2", target=self.target, contract=CONTRACT[self.target.name], notes=state.notes
        )

    def generate(self, state: RunState, files: dict[str, str]) -> tuple[str, list[str]]:
        module = state.modules[state.module_index]
        earlier = {f"{m.name}.py" for m in state.modules[: state.module_index]}
        shown = {path: text for path, text in files.items() if path in earlier}
        text = self.prompts.render(
            "generate.j2",
            module=module,
            position=state.module_index + 1,
            modules=state.modules,
            entry=state.entry,
            files=normalise_files(shown),
            notes=state.notes,
        )
        return text, [f"{module.name}.py"]

    def repair(self, state: RunState, files: dict[str, str]) -> str:
        stuck = state.stuck if state.stuck.context_added else None
        if state.phase == "modules" and stuck is None:
            # The module and what it imports; the whole port once the loop is stuck.
            upto = {f"{m.name}.py" for m in state.modules[: state.module_index + 1]}
            shown = {path: text for path, text in files.items() if path in upto}
        else:
            shown = dict(files)
        expected = (
            [f"{state.scope}.py"]
            if state.phase == "modules"
            else [f"{m.name}.py" for m in state.modules]
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
            edit_format=True,
        )

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
