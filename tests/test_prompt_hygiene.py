"""Every prompt of every example and translate target, as the model reads it.

Each prompt kind (plan, generate, repair of a module and of the whole port, re-ask,
optimise) is rendered whole (system text, stable prefix, task) for every example and every
target translate writes, and checked for five properties: one answer format, stated once;
no rendering code; the noise contract exactly for stochastic specs; the reference's value
types, as measured by stepping it; no file the model cannot see named. A repair that is
stuck is the one prompt that carries the reference whole, rendering included.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from envport.pipeline import TRANSLATE_TARGETS
from envport.pipeline.observed import ObservedTypes, observe
from envport.pipeline.prompting import PromptBuilder, prompt_builder, target_info
from envport.runs.state import (
    CheckOutcome,
    OptimizeProgress,
    OptimizeSettings,
    RunState,
)
from envport.spec import ModuleSpec, PortSpec, load_spec

from helpers import ROOT

EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/envport.toml"))
CASES = [
    (name, target)
    for name in EXAMPLES
    for target in TRANSLATE_TARGETS
    if target in load_spec(ROOT / "examples" / name).targets
]
# What states each answer format: the whole-file format, the plan's TOML block.
FORMATS = {"files": "## How to answer", "toml": "Answer with one fenced `toml` block"}
RENDERING = ("pygame", "def render", "def close", "render_fps", "render_mode ==")
NOISE = ("sample_noise", "step_given_noise", "## Randomness")
# A file-like word: a path ending in an extension a repository holds.
FILE_NAME = re.compile(r"[\w./-]+\.(?:md|toml|py|rs|json|txt|j2|png|yaml|yml|cfg|html)\b")
# A web address in a reference's own source (chess_utils.py links to PettingZoo's GitHub)
# names no file of the run.
URL = re.compile(r"https?://\S+")


def failure(scope: str) -> CheckOutcome:
    return CheckOutcome(
        name="l1.transition" if scope != "composed" else "l3.free",
        scope=scope,
        level="l1" if scope != "composed" else "l3",
        passed=False,
        failures=["episode 2, step 8\n  reward: expected 0.0, got 1.0"],
        signature=f"{scope}|reward",
    )


@cache
def setup(name: str, target: str) -> tuple[PortSpec, PromptBuilder]:
    spec = load_spec(ROOT / "examples" / name)
    return spec, prompt_builder(spec, target, None)


def run_state(spec: PortSpec, target: str, **changes: object) -> RunState:
    base = RunState(
        run_id="r",
        spec_source="s",
        spec_name=spec.name,
        target=target,  # type: ignore[arg-type]
        model="replay:x",
        modules=spec.target(target).modules,
        entry=spec.target(target).entry,
    )
    return base.model_copy(update=changes)


def port_files(spec: PortSpec, target: str) -> dict[str, str]:
    """The example's own port when it ships one, else one line per module."""
    shipped = ROOT / "examples" / spec.name / "ports" / target
    info = target_info(target)
    names = [info.file(m.name) for m in spec.target(target).modules]
    files = {name: (shipped / name).read_text() for name in names if (shipped / name).is_file()}
    return files or dict.fromkeys(names, "X = 1\n")


def prompts(name: str, target: str) -> dict[str, str]:
    """Every prompt kind, whole: system text, stable prefix, then the task."""
    spec, builder = setup(name, target)
    state = run_state(spec, target)
    files = port_files(spec, target)
    modules = state.modules

    def whole(run: RunState, task: str) -> str:
        return "\n".join([builder.system(), builder.context(run), task])

    planning = run_state(spec, target, modules=[], phase="plan")
    out = {"plan": whole(planning, builder.plan(planning))}
    for index, module in enumerate(modules):
        run = state.model_copy(update={"module_index": index})
        out[f"generate {module.name}"] = whole(run, builder.generate(run, files)[0])
    first = modules[0].name
    module_repair = state.model_copy(
        update={"phase": "modules", "scope": first, "open_failures": [failure(first)]}
    )
    out["repair module"] = whole(module_repair, builder.repair(module_repair, files))
    composed = state.model_copy(
        update={"phase": "composed", "scope": "composed", "open_failures": [failure("composed")]}
    )
    out["repair composed"] = whole(composed, builder.repair(composed, files))
    optimizing = state.model_copy(
        update={
            "phase": "optimize",
            "optimize": OptimizeSettings(rounds=2, batch_sizes=[32, 512]),
            "optimization": OptimizeProgress(sps={32: 1e6, 512: 1e7}),
        }
    )
    out["optimize"] = whole(optimizing, builder.optimize(optimizing, files))
    return out


def allowed_files(spec: PortSpec, target: str) -> set[str]:
    """The port's own files, the package data files the prompt shows (`reference.data`,
    by path or name) and the files of the package folders a module's `shows` lists: the
    only files a prompt may name."""
    shown = {n for path in spec.reference.data for n in (path, path.rsplit("/", 1)[-1])}
    _, builder = setup(spec.name, target)
    for module in spec.target(target).modules:
        for source in builder.shown(module.name):
            if source.language == "text":  # a folder, listed by its files' names
                shown |= set(source.text.split())
    return {target_info(target).file(m.name) for m in spec.target(target).modules} | shown


# A module a shown source imports (`import ruamel.yaml`): a name, not a file.
IMPORTED = re.compile(r"^\s*(?:import|from)\s+([\w.]+)", re.MULTILINE)


def port_file(name: str, target: str) -> bool:
    """A file the answer itself writes: a proposed test case, or a crate's manifest and
    sources (a Rust plan names the files its modules will be)."""
    if re.fullmatch(r"tests/\w+\.toml", name):
        return True
    return target == "rust" and re.fullmatch(r"Cargo\.toml|(src/)?\w+\.rs", name) is not None


@pytest.mark.parametrize(("name", "target"), CASES)
def test_every_prompt_states_one_answer_format_once(name: str, target: str) -> None:
    for kind, text in prompts(name, target).items():
        counts = {fmt: text.count(marker) for fmt, marker in FORMATS.items()}
        expected = "toml" if kind == "plan" else "files"
        assert counts[expected] == 1, (kind, counts)
        assert sum(counts.values()) == 1, (kind, counts)
    _, builder = setup(name, target)
    files_reask = builder.reask("the block is not closed", False, ["env.py"], plan=False)
    plan_reask = builder.reask("no toml block", False, [], plan=True)
    assert "### File:" in files_reask and "toml" not in files_reask
    assert "`toml` block" in plan_reask and "### File:" not in plan_reask


# A sentence's end run into the next one's start ("...transcript.To change..."): what two
# template parts joined without a break leave. Code (fenced or inline) is left out.
RUN_TOGETHER = re.compile(r"[a-z)][.!?:][A-Z][a-z]")
CODE = re.compile(r"(`{3,}).*?\1|`[^`\n]*`", re.DOTALL)


@pytest.mark.parametrize(("name", "target"), CASES)
def test_no_prompt_runs_two_sentences_together(name: str, target: str) -> None:
    for kind, text in prompts(name, target).items():
        # The reference's source and the port's files are fenced: quoted as they are.
        prose = CODE.sub(" ", text)
        joined = [
            prose[max(0, m.start() - 40) : m.end() + 20] for m in RUN_TOGETHER.finditer(prose)
        ]
        assert not joined, f"{name}/{target} {kind}: {joined}"


def asked_for(spec: PortSpec, target: str) -> list[str]:
    """Rendering code a spec asks a module to port (its `shows`: Crafter's pixels module is
    shown the renderer), and that module's own file in the port shown to later modules."""
    _, builder = setup(spec.name, target)
    files = port_files(spec, target)
    texts = []
    for module in spec.target(target).modules:
        if module.shows:
            texts += [source.text for source in builder.shown(module.name)]
            texts.append(files.get(target_info(target).file(module.name), ""))
    return [text for text in texts if text]


@pytest.mark.parametrize(("name", "target"), CASES)
def test_no_prompt_carries_rendering_code(name: str, target: str) -> None:
    spec, _ = setup(name, target)
    asked = asked_for(spec, target)
    for kind, text in prompts(name, target).items():
        for part in asked:
            text = text.replace(part, "")
        found = [word for word in RENDERING if word in text]
        assert not found, (kind, found)


@pytest.mark.parametrize(("name", "target"), CASES)
def test_the_noise_contract_is_there_exactly_for_a_stochastic_spec(name: str, target: str) -> None:
    spec, _ = setup(name, target)
    for kind, text in prompts(name, target).items():
        present = [word for word in NOISE if word in text]
        if spec.randomness is None:
            assert not present, (kind, present)
        else:
            assert present == list(NOISE), (kind, present)


@pytest.mark.parametrize(("name", "target"), CASES)
def test_every_prompt_states_the_reference_types_it_measured(name: str, target: str) -> None:
    spec, builder = setup(name, target)
    observed = builder.observed
    assert isinstance(observed, ObservedTypes)
    if spec.state.fields:
        assert [n for n, _ in observed.fields] == list(spec.state.fields)
    else:  # a bridge: the fields are what it reads, each with its measured type
        assert observed.fields
        for kind, text in prompts(name, target).items():
            for field, measured in observed.fields:
                assert f"`{field}` {measured}" in text, (kind, field)
    for kind, text in prompts(name, target).items():
        for field, path in spec.state.fields.items():
            line = f"- `{field}` = `env.{path}`: {dict(observed.fields)[field]}"
            assert line in text, (kind, line)
        if observed.game is not None:
            # A game: a player's own observation and mask, never the harness's turn record.
            assert f"a player's observation is a {observed.game['observation']}" in text, kind
            assert "int32 array, shape (92,)" not in text, kind
            continue
        returns = (
            f"observation {observed.observation}; reward {observed.reward}; "
            f"terminated and truncated {observed.flags}"
        )
        assert returns in text, kind


@pytest.mark.parametrize(("name", "target"), CASES)
def test_no_prompt_names_a_file_the_model_cannot_see(name: str, target: str) -> None:
    spec, _ = setup(name, target)
    allowed = allowed_files(spec, target)
    for kind, text in prompts(name, target).items():
        named = set(FILE_NAME.findall(URL.sub("", text))) - set(IMPORTED.findall(text))
        # A proposed test case is a file the answer itself writes under tests/.
        unknown = {f for f in named - allowed if not port_file(f, target)}
        assert not unknown, (kind, unknown)
        assert "docs/" not in text and "DESIGN" not in text.upper().replace("DESIGNED", ""), kind


def test_the_measured_types_show_what_the_reference_changes() -> None:
    # Acrobot keeps float32 after a reset and float64 after a step; Pendulum's reward is a
    # NumPy scalar; FrozenLake's cell is a NumPy int after a reset, a Python int after a step.
    acrobot = dict(observe(load_spec(ROOT / "examples" / "acrobot")).fields)
    assert acrobot["physics"] == (
        "NumPy float32 array, shape (4,) after reset; NumPy float64 array, shape (4,) after step"
    )
    assert observe(load_spec(ROOT / "examples" / "pendulum")).reward == "NumPy float64 scalar"
    lake = observe(load_spec(ROOT / "examples" / "frozenlake"))
    assert dict(lake.fields)["s"] == "NumPy int64 scalar after reset; Python int after step"
    assert lake.observation == "Python int" and lake.flags == "Python bool"


def test_a_stuck_repair_gets_the_reference_whole() -> None:
    spec, builder = setup("cartpole", "jax")
    stuck = run_state(
        spec, "jax", phase="composed", scope="composed", open_failures=[failure("composed")]
    )
    stuck.stuck.context_added = True
    stuck.stuck.count = 3
    text = builder.repair(stuck, port_files(spec, "jax"))
    whole = builder.sources[0]
    assert f"`{whole.module}` (whole, {whole.lines} lines)" in text
    assert whole.text.strip() in text and "def render" in text
    plain = builder.repair(stuck.model_copy(update={"stuck": type(stuck.stuck)()}), {})
    assert "def render" not in plain


@pytest.mark.parametrize(("name", "target"), CASES)
def test_the_stable_prefix_is_the_same_bytes_for_every_call_after_the_plan(
    name: str, target: str
) -> None:
    # System text and context come first and never change within a run (the part a
    # provider can cache); each task's variable part (code, divergences) comes after.
    spec, builder = setup(name, target)
    states = [
        run_state(spec, target),
        run_state(spec, target, module_index=1, iteration=2),
        run_state(spec, target, phase="composed", scope="composed", iteration=4),
    ]
    stuck = states[-1].model_copy(deep=True)
    stuck.stuck.context_added = True
    prefixes = {builder.system() + builder.context(s) for s in [*states, stuck]}
    assert len(prefixes) == 1
    assert setup(name, target)[1].context(states[0]) == prompt_builder(spec, target, None).context(
        states[0]
    )  # measured types and slices: the same bytes every time


def test_prompts_are_smaller_than_the_whole_reference() -> None:
    _, builder = setup("cartpole", "numpy")
    whole = sum(len(s.text) for s in builder.sources)
    sliced = sum(len(s.text) for s in builder.sliced)
    assert sliced < whole / 3
    assert Path(builder.sources[0].module.replace(".", "/")).name == "cartpole"


# What the checks call on a port of each target, beyond what loading it needs: a prompt
# that leaves one out gets ports whose checks run weaker (no state reads: a gap).
CHECKS_CALL = {
    "jax": ("state_from_reference", "state_to_reference", "reset", "step"),
    "numpy": ("state_from_reference", "state_to_reference", "get_state", "set_state"),
    "rust": ("envport_state_layout", "envport_step"),
}
# A two-player game's port (envport.targets.game_port), JAX or NumPy alike.
GAME_CALLS = ("state_from_reference", "state_to_reference", "init", "step")


@pytest.mark.parametrize(("name", "target"), CASES)
def test_every_prompt_asks_for_every_part_of_the_contract_the_checks_use(
    name: str, target: str
) -> None:
    spec, _ = setup(name, target)
    calls = GAME_CALLS if spec.game is not None else CHECKS_CALL[target]
    for kind, text in prompts(name, target).items():
        missing = [part for part in calls if f"`{part}" not in text]
        assert not missing, (kind, missing)


# Lines that apply only to some specs: (text, when it applies).
CONDITIONAL = {
    "half-widths beyond each bound": "box actions",
    "Other float fields": "a float state",
    "Some episodes start near the time limit": "a time limit",
}


def _applies(spec: PortSpec, builder: PromptBuilder) -> dict[str, bool]:
    observed = builder.observed
    assert isinstance(observed, ObservedTypes)
    return {
        "box actions": observed.box_actions,
        "a float state": observed.float_state,
        "a time limit": observed.time_limit is not None,
    }


@pytest.mark.parametrize(("name", "target"), CASES)
def test_a_line_that_does_not_apply_to_the_spec_is_left_out(name: str, target: str) -> None:
    spec, builder = setup(name, target)
    applies = _applies(spec, builder)
    context = builder.context(run_state(spec, target))
    for text, condition in CONDITIONAL.items():
        assert (text in context) == applies[condition], (text, condition)
    advice = {"jax": "Keep float32", "numpy": "Use float64", "rust": "compute in `f64`"}[target]
    assert (advice in context) == applies["a float state"]


JAX_CASES = [(name, target) for name, target in CASES if target == "jax"]


# MinAtar keeps `last_action` across reset(); a functional reset cannot, so the JAX prompt
# asks for `reset_after`, and only where the reference (measured) keeps something.
@pytest.mark.parametrize(("name", "target"), JAX_CASES)
def test_the_jax_prompt_asks_for_reset_after_exactly_when_the_reference_keeps_state(
    name: str, target: str
) -> None:
    spec, builder = setup(name, target)
    assert isinstance(builder.observed, ObservedTypes)
    kept = builder.observed.kept_across_reset
    context = builder.context(run_state(spec, target))
    assert ("also export `reset_after(key, state, params)" in context) == bool(kept), kept
    if name in ("minatar_asterix", "minatar_seaquest"):
        assert "The reference keeps last_action across `reset()`" in context


def test_the_examples_cover_both_sides_of_every_condition() -> None:
    seen = [_applies(*setup(name, target)) for name, target in CASES]
    for condition in ("box actions", "a float state"):
        assert {row[condition] for row in seen} == {True, False}, condition


def test_no_time_limit_line_for_an_env_without_one(tmp_path: Path) -> None:
    from envport.init import Budget, write_spec

    path = write_spec(
        "gymnasium.envs.classic_control.cartpole:CartPoleEnv",
        tmp_path,
        budget=Budget(10, 2000, 5, 4),
    )
    spec = load_spec(path)
    builder = prompt_builder(spec, "numpy", None)
    planned = [ModuleSpec(name="env", exports=["VectorEnv", "state_from_reference"])]
    context = builder.context(run_state(spec, "numpy", modules=planned, entry="env"))
    assert "L3 rollouts:" in context and "near the time limit" not in context
    assert "half-widths" not in context  # CartPole's actions are Discrete
    assert "Use float64 for the physics" in context
