"""BATCH.toml: which runs a batch makes (spec x target x model), their limits and caps.

    out = "runs/overnight"        # where the runs live (default runs/<file stem>)
    concurrency = 2               # runs at once (default 1)
    total_usd = 20.0              # no run starts once this could be passed
    budget_usd = 5.0              # each run's dollar cap (an entry may set its own)

    [defaults]                    # any entry key; entries override them
    models = ["anthropic:claude-sonnet-4-5"]
    max_iterations = 4

    [[runs]]
    spec = "examples/cartpole"
    targets = ["jax", "numpy"]

An entry's options have the names of translate's flags (`budget_usd` is `--budget-usd`,
`call_timeout` is `--call-timeout`; envport.runs.options); `run_usd`, the name before, is
still read. Paths are relative to the file. Every entry is checked before anything starts (spec,
target, model, prompts directory): a typo is one line and exit 2, not a failed run at 3 am.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from envport.errors import EnvportError
from envport.llm.registry import PROVIDERS
from envport.llm.replay import SESSION_FILE
from envport.pipeline import TRANSLATE_TARGETS
from envport.runs.options import (
    OPTIMIZE_KEYS,
    Limits,
    ResumeOptions,
    TranslateOptions,
    optimize_settings,
)
from envport.spec import load_spec, spec_path

# A batch file's earlier name for a run's dollar cap, still read.
_BUDGET_USD = AliasChoices("budget_usd", "run_usd")


class RunSettings(Limits):
    """What an entry (or [defaults]) may say about its runs: which runs they are (spec x
    targets x models) and their translate options. The limits are inherited, so a key has
    the name and bounds the run's own setting has; only the keys written are set."""

    model_config = ConfigDict(extra="forbid")

    spec: str | None = None
    name: str | None = Field(default=None, description="prefix of the run ids (default spec name)")
    target: str | None = None
    targets: list[str] | None = None
    model: str | None = None
    models: list[str] | None = None
    base_url: str | None = None
    prompts: str | None = None
    budget_usd: float | None = Field(default=None, gt=0, validation_alias=_BUDGET_USD)
    # Without run.json's old names: `max_tokens` in a batch file would read as a per-call cap.
    budget_tokens: int | None = Field(default=None, gt=0)
    call_timeout: float = Field(default=Limits().call_timeout, gt=0)
    optimize: bool | None = None
    optimize_rounds: int | None = Field(default=None, ge=1)
    bench_batch_sizes: list[int] | None = None
    bench_steps: int | None = Field(default=None, ge=1)
    bench_repeats: int | None = Field(default=None, ge=1)

    def limits(self) -> Limits:
        """The limits this entry (merged with [defaults]) gives; only those are set."""
        given = self.model_dump(include=set(Limits.model_fields), exclude_unset=True)
        return Limits.model_validate(given)

    def optimize_keys(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in OPTIMIZE_KEYS}


class BatchFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    out: str | None = None
    concurrency: int = Field(default=1, ge=1)
    total_usd: float | None = Field(default=None, gt=0)
    budget_usd: float | None = Field(default=None, gt=0, validation_alias=_BUDGET_USD)
    defaults: RunSettings = Field(default_factory=RunSettings)
    runs: list[RunSettings] = Field(min_length=1)


@dataclass(frozen=True)
class PlannedRun:
    """One run of the batch, with the id that names its directory for good, and the options
    of its translate (its id and the batch's runs directory included)."""

    id: str
    options: TranslateOptions

    @property
    def budget_usd(self) -> float | None:
        return self.options.limits.budget_usd

    def given(self, budget_usd: float | None) -> Limits:
        """Its limits as the batch hands them to a translate or resume: the batch file's,
        always, with the dollar cap the total allows, and always some budget (a run that
        gave up continues only when one is given, and --retry-failed means exactly that)."""
        limits = self.options.limits
        update: dict[str, Any] = {"max_iterations": limits.max_iterations}
        if budget_usd is not None:
            update["budget_usd"] = budget_usd
        return limits.model_copy(update=update)

    def translate(self, budget_usd: float | None) -> TranslateOptions:
        return self.options.model_copy(update={"limits": self.given(budget_usd)})

    def resume(self, run: Path, budget_usd: float | None) -> ResumeOptions:
        # A resumed run keeps the optimisation settings it began with.
        base_url = self.options.base_url
        return ResumeOptions(run=str(run), base_url=base_url, limits=self.given(budget_usd))


@dataclass
class BatchPlan:
    file: Path
    out: Path
    concurrency: int
    total_usd: float | None
    runs: list[PlannedRun] = field(default_factory=list)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "x"


def model_slug(model: str) -> str:
    provider, _, rest = model.partition(":")
    if provider == "replay":
        return f"replay-{_slug(Path(rest).name)}"
    return _slug(f"{provider}-{rest}")


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    return f"{where}: {first['msg']}"


def read_batch_file(path: Path) -> BatchFile:
    if not path.is_file():
        raise EnvportError(f"{path}: no such batch file")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise EnvportError(f"{path}: not valid TOML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise EnvportError(f"{path}: cannot read: {error}") from None
    try:
        return BatchFile.model_validate(data)
    except ValidationError as error:
        raise EnvportError(f"{path}: {_first_error(error)}") from None


def _model(model: str, base: Path, where: str) -> str:
    provider, sep, rest = model.partition(":")
    if not sep or not rest or provider not in PROVIDERS:
        raise EnvportError(
            f"{where}: model {model!r} is not <provider>:<model>; use anthropic:<model>, "
            "openai:<model> or replay:<session dir>"
        )
    if provider != "replay":
        return model
    session = (base / rest).resolve()
    if not (session / SESSION_FILE).is_file():
        raise EnvportError(f"{where}: replay session {session} has no {SESSION_FILE}")
    # Absolute, as translate stores it: the cache key of every answer includes the name.
    return f"replay:{session}"


def _expand(
    entry: RunSettings, batch: BatchFile, base: Path, out: Path, index: int
) -> Iterator[PlannedRun]:
    where = f"runs[{index}]"
    merged = batch.defaults.model_copy(update=entry.model_dump(exclude_unset=True))
    if not merged.spec:
        raise EnvportError(f'{where}: no spec; give each run `spec = "path/to/spec"`')
    try:
        spec_file = spec_path(base / merged.spec).resolve()
        spec = load_spec(spec_file)
    except EnvportError as error:
        raise EnvportError(f"{where}: {error}") from None
    targets = merged.targets or ([merged.target] if merged.target else [])
    models = merged.models or ([merged.model] if merged.model else [])
    if not targets:
        raise EnvportError(f'{where}: no target; add `target = "jax"` or `targets = [...]`')
    stray = [key for key, value in merged.optimize_keys().items() if value is not None]
    if stray and not merged.optimize:
        raise EnvportError(f"{where}: {', '.join(stray)} only applies with optimize = true")
    if not models:
        raise EnvportError(
            f'{where}: no model; add `model = "anthropic:<model>"` (or openai:, replay:)'
        )
    for target in targets:
        if target not in TRANSLATE_TARGETS:
            raise EnvportError(
                f"{where}: target {target!r}: translate supports {', '.join(TRANSLATE_TARGETS)}"
            )
    prompts = None
    if merged.prompts:
        prompts_dir = (base / merged.prompts).resolve()
        if not prompts_dir.is_dir():
            raise EnvportError(f"{where}: prompts {prompts_dir}: no such directory")
        prompts = str(prompts_dir)
    limits = merged.limits()
    if limits.budget_usd is None and batch.budget_usd is not None:
        limits = limits.model_copy(update={"budget_usd": batch.budget_usd})
    try:
        optimize = optimize_settings(bool(merged.optimize), merged.optimize_keys())
    except ValidationError as error:
        raise EnvportError(f"{where}: {_first_error(error)}") from None
    name = _slug(merged.name or spec.name)
    for target in targets:
        for model in models:
            resolved = _model(model, base, where)
            run_id = f"{name}-{target}-{model_slug(resolved)}"
            options = TranslateOptions(
                spec=str(spec_file),
                target=target,
                model=resolved,
                base_url=merged.base_url,
                out=out,
                run_id=run_id,
                prompts=prompts,
                limits=limits,
                optimize=optimize,
            )
            yield PlannedRun(run_id, options)


def load_batch(path: Path | str) -> BatchPlan:
    """The batch file, checked and expanded into runs with unique ids."""
    file = Path(path).resolve()
    batch = read_batch_file(file)
    base = file.parent
    out = (base / batch.out) if batch.out else base / "runs" / _slug(file.stem)
    plan = BatchPlan(file, out.resolve(), batch.concurrency, batch.total_usd)
    seen: dict[str, int] = {}
    for index, entry in enumerate(batch.runs):
        for run in _expand(entry, batch, base, plan.out, index):
            if run.id in seen:
                raise EnvportError(
                    f"{file}: runs[{seen[run.id]}] and runs[{index}] both make run {run.id}; "
                    "give one of them a `name`"
                )
            seen[run.id] = index
            plan.runs.append(run)
    capped = [run.budget_usd for run in plan.runs if run.budget_usd is not None]
    if plan.total_usd is not None and capped and min(capped) > plan.total_usd:
        raise EnvportError(
            f"{file}: total_usd ${plan.total_usd:g} is below every run's budget_usd "
            f"(${min(capped):g} at least): no run could start"
        )
    return plan
