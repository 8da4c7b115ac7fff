"""BATCH.toml: which runs a batch makes (spec x target x model), their limits and caps.

    out = "runs/overnight"        # where the runs live (default runs/<file stem>)
    concurrency = 2               # runs at once (default 1)
    total_usd = 20.0              # no run starts once this could be passed
    run_usd = 5.0                 # each run's dollar cap (an entry may set its own)

    [defaults]                    # any entry key; entries override them
    models = ["anthropic:claude-sonnet-4-5"]
    max_iterations = 4

    [[runs]]
    spec = "examples/cartpole"
    targets = ["jax", "numpy"]

Paths are relative to the file. Every entry is checked before anything starts (spec,
target, model, prompts directory): a typo is one line and exit 2, not a failed run at 3 am.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envport.errors import EnvportError
from envport.llm.registry import PROVIDERS
from envport.llm.replay import SESSION_FILE
from envport.pipeline import TRANSLATE_TARGETS
from envport.spec import load_spec, spec_path


class RunSettings(BaseModel):
    """What an entry (or [defaults]) may say about its runs."""

    model_config = ConfigDict(extra="forbid")

    spec: str | None = None
    name: str | None = Field(default=None, description="prefix of the run ids (default spec name)")
    target: str | None = None
    targets: list[str] | None = None
    model: str | None = None
    models: list[str] | None = None
    base_url: str | None = None
    prompts: str | None = None
    run_usd: float | None = Field(default=None, gt=0)
    budget_tokens: int | None = Field(default=None, gt=0)
    max_iterations: int | None = Field(default=None, ge=0)
    max_minutes: float | None = Field(default=None, gt=0)
    stuck_after: int | None = Field(default=None, ge=2)
    call_timeout: float | None = Field(default=None, gt=0, description="seconds per attempt")
    call_attempts: int | None = Field(default=None, ge=1)
    optimize: bool | None = None
    optimize_rounds: int | None = Field(default=None, ge=1)


class BatchFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    out: str | None = None
    concurrency: int = Field(default=1, ge=1)
    total_usd: float | None = Field(default=None, gt=0)
    run_usd: float | None = Field(default=None, gt=0)
    defaults: RunSettings = Field(default_factory=RunSettings)
    runs: list[RunSettings] = Field(min_length=1)


@dataclass(frozen=True)
class PlannedRun:
    """One run of the batch, with the id that names its directory for good."""

    id: str
    spec: Path
    target: str
    model: str
    base_url: str | None = None
    prompts: str | None = None
    run_usd: float | None = None
    budget_tokens: int | None = None
    max_iterations: int | None = None
    max_minutes: float | None = None
    stuck_after: int | None = None
    call_timeout: float | None = None
    call_attempts: int | None = None
    optimize: bool = False
    optimize_rounds: int | None = None

    def optimize_args(self) -> list[str]:
        """translate's optimisation flags (a resumed run keeps the settings it began with)."""
        if not self.optimize:
            return []
        rounds = (
            [] if self.optimize_rounds is None else ["--optimize-rounds", str(self.optimize_rounds)]
        )
        return ["--optimize", *rounds]

    def limit_args(self, budget_usd: float | None) -> list[str]:
        """The command-line limits of its translate or resume (the batch file's, always)."""
        words: list[str] = []
        for flag, value in (
            ("--max-iterations", self.max_iterations),
            ("--budget-usd", budget_usd),
            ("--budget-tokens", self.budget_tokens),
            ("--max-minutes", self.max_minutes),
            ("--stuck-after", self.stuck_after),
            ("--call-timeout", self.call_timeout),
            ("--call-attempts", self.call_attempts),
        ):
            if value is not None:
                words += [flag, f"{value:.10g}" if isinstance(value, float) else str(value)]
        if self.base_url:
            words += ["--base-url", self.base_url]
        return words


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
    entry: RunSettings, defaults: RunSettings, plan: BatchFile, base: Path, index: int
) -> Iterator[PlannedRun]:
    where = f"runs[{index}]"
    merged = defaults.model_copy(update=entry.model_dump(exclude_unset=True))
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
    if merged.optimize_rounds is not None and not merged.optimize:
        raise EnvportError(f"{where}: optimize_rounds only applies with optimize = true")
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
    run_usd = merged.run_usd if merged.run_usd is not None else plan.run_usd
    name = _slug(merged.name or spec.name)
    for target in targets:
        for model in models:
            resolved = _model(model, base, where)
            yield PlannedRun(
                id=f"{name}-{target}-{model_slug(resolved)}",
                spec=spec_file,
                target=target,
                model=resolved,
                base_url=merged.base_url,
                prompts=prompts,
                run_usd=run_usd,
                budget_tokens=merged.budget_tokens,
                max_iterations=merged.max_iterations,
                max_minutes=merged.max_minutes,
                stuck_after=merged.stuck_after,
                call_timeout=merged.call_timeout,
                call_attempts=merged.call_attempts,
                optimize=bool(merged.optimize),
                optimize_rounds=merged.optimize_rounds,
            )


def load_batch(path: Path | str) -> BatchPlan:
    """The batch file, checked and expanded into runs with unique ids."""
    file = Path(path).resolve()
    batch = read_batch_file(file)
    base = file.parent
    out = (base / batch.out) if batch.out else base / "runs" / _slug(file.stem)
    plan = BatchPlan(file, out.resolve(), batch.concurrency, batch.total_usd)
    seen: dict[str, int] = {}
    for index, entry in enumerate(batch.runs):
        for run in _expand(entry, batch.defaults, batch, base, index):
            if run.id in seen:
                raise EnvportError(
                    f"{file}: runs[{seen[run.id]}] and runs[{index}] both make run {run.id}; "
                    "give one of them a `name`"
                )
            seen[run.id] = index
            plan.runs.append(run)
    capped = [run.run_usd for run in plan.runs if run.run_usd is not None]
    if plan.total_usd is not None and capped and min(capped) > plan.total_usd:
        raise EnvportError(
            f"{file}: total_usd ${plan.total_usd:g} is below every run's run_usd "
            f"(${min(capped):g} at least): no run could start"
        )
    return plan
