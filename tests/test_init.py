"""`envport init` on real Gymnasium envs: every classic-control and toy-text env gets a spec
that loads and whose state round trip passes, or (Blackjack: list-valued hands) exit 2
with one line naming the attribute and the bridge to write."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest
from init_specs import BUDGET

from envport.init import Budget, InitError, write_spec
from envport.init.episodes import NATURAL_CAP
from envport.init.policies import uniform
from envport.init.roundtrip import prove
from envport.spec import load_spec
from envport.targets.reference import Reference

from helpers import run_envport

PROVEN = [
    "CartPole-v1",
    "Acrobot-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
    "CliffWalking-v1",
    "FrozenLake-v1",
    "Taxi-v4",
]


@pytest.mark.parametrize("env", PROVEN)
def test_init_writes_a_spec_whose_round_trip_passes(env: str, tmp_path: Path) -> None:
    result = run_envport("init", env, "--out", str(tmp_path), "--budget", BUDGET)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "envport.toml")
    # One progress line per phase on stderr, each saying what it does.
    phases = result.stderr.splitlines()
    assert len(phases) >= 5 and all(line.startswith("envport init: ") for line in phases)
    spec = load_spec(tmp_path)
    assert spec.reference.entry == f"gymnasium:{env}"
    assert spec.reference.sources[0].startswith("gymnasium.envs.")
    assert all(not t.modules and t.probes is None for t in spec.targets.values())
    assert set(spec.targets) == {"jax", "numpy"}
    assert set(spec.state.bounds) == set(spec.state.fields)
    # The round trip again, independently of init's own, through the verifier's harness.
    source, fresh = Reference(spec), Reference(spec)
    trip = prove(source, fresh, uniform(source.action_space), starts=8, steps=10, depth=30)
    assert trip.transitions > 0
    text = (tmp_path / "envport.toml").read_text()
    assert "round trip" in text and "Bounds from reachable states" in text


def test_blackjack_exits_2_naming_the_list_valued_hand(tmp_path: Path) -> None:
    result = run_envport("init", "Blackjack-v1", "--out", str(tmp_path), "--budget", BUDGET)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("envport: ")]
    assert len(errors) == 1 and errors[0] == result.stderr.splitlines()[-1]
    assert "`unwrapped.player`" in errors[0] or "`unwrapped.dealer`" in errors[0]
    assert "list whose length changes" in errors[0] and "bridge" in errors[0]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "envport.toml").exists()


def test_cartpole_spec_as_inferred(tmp_path: Path) -> None:
    path = write_spec("CartPole-v1", tmp_path, "jax", budget=Budget(30, 8000, 10, 6))
    spec = load_spec(path)
    # Field names follow the examples' rule: the attribute's name, `state` -> `physics`.
    assert spec.state.fields == {"elapsed_steps": "_elapsed_steps", "physics": "unwrapped.state"}
    assert spec.state.step_counter == "elapsed_steps"
    assert spec.reference.sources == ["gymnasium.envs.classic_control.cartpole"]
    assert spec.observation.names == [
        "cart_position",
        "cart_velocity",
        "pole_angle",
        "pole_angular_velocity",
    ]
    assert list(spec.targets) == ["jax"]
    bound = spec.state.bounds["elapsed_steps"]
    assert (bound.low, bound.high, bound.integer) == (0, 500, True)
    physics = spec.state.bounds["physics"]
    # The physics is the observation: the declared observation space's finite bounds join
    # the reached range (x to 4.8, theta to 0.418); the unbounded velocities stay reached.
    assert isinstance(physics.high, list) and isinstance(physics.low, list)
    assert physics.high[0] == pytest.approx(4.8, abs=0.01)
    assert physics.high[2] == pytest.approx(0.4189, abs=0.001)
    assert 1.0 < physics.high[1] < 5.0 and -5.0 < physics.low[3] < -1.0
    assert spec.tolerance_for("reward").atol == 0.0
    assert spec.tolerance_for("physics").atol == 1e-5
    assert spec.randomness is None and spec.levels.l3.steps == 500
    text = path.read_text()
    assert "`unwrapped.gravity`" in text  # a constant step reads, said to be the reference's
    # The physics is the observation: its meaning is the docstring's table, row by row.
    assert spec.state.describe["physics"].startswith(
        "the observation's components in order: [0] Cart Position (Min -4.8, Max 4.8); "
        "[1] Cart Velocity"
    )
    assert "elapsed_steps" not in spec.state.describe  # the source says nothing of it


def test_frozenlake_gets_randomness_and_its_harness(tmp_path: Path) -> None:
    path = write_spec("gymnasium:FrozenLake-v1", tmp_path, budget=Budget(30, 8000, 10, 6))
    spec = load_spec(path)
    assert spec.randomness is not None
    assert (spec.randomness.noise, spec.randomness.categories) == ("categorical", 3)
    assert spec.harness_file(spec.randomness.harness).is_file()
    assert spec.state.fields == {"elapsed_steps": "_elapsed_steps", "s": "unwrapped.s"}
    s = spec.state.bounds["s"]
    assert (s.low, s.high, s.integer) == (0, 15, True)
    # `s` is the Discrete(16) observation: its meaning is the range of its codes.
    assert spec.state.describe == {"s": "an integer code in 0..15: the observation itself"}
    # The harness maps the reference's own draws: noise in 0..2, a third each.
    ref = Reference(spec)
    assert ref.recorder is not None
    ref.reset(seed=0)
    noise = []
    for _ in range(300):
        out = ref.step(int(np.random.default_rng(len(noise)).integers(4)))
        noise.append(int(out.noise))
        if out.terminated or out.truncated:
            ref.reset(seed=len(noise))
    counts = np.bincount(noise, minlength=3)
    assert counts.size == 3 and counts.min() > 50
    # Every episode starts on square 0: the start is compared exactly, and init says so.
    assert "`reset` draws nothing the state shows" in _prose(path)


def test_taxi_draws_but_is_deterministic(tmp_path: Path) -> None:
    path = write_spec("Taxi-v4", tmp_path, budget=Budget(30, 8000, 10, 6))
    assert load_spec(path).randomness is None
    assert "outcome never depended on the draws" in path.read_text()


def _prose(path: Path) -> str:
    """The spec's text with its comments' line breaks and `#` marks taken out."""
    return " ".join(word for word in path.read_text().split() if word != "#")


def test_an_env_without_a_time_limit_is_played_to_its_own_ends(tmp_path: Path) -> None:
    # Fuse's episodes end on their own after 600 to 1,200 steps and no time limit is
    # registered: L3 plays them whole (not 500 steps), and the bounds reach the fuse's end.
    path = write_spec("init_factories:fuse", tmp_path, budget=Budget(30, 20_000, 10, 6))
    spec = load_spec(path)
    assert 1200 <= spec.levels.l3.steps <= 1600 and spec.levels.l3.steps % 100 == 0
    assert spec.state.bounds["burnt"].high >= 1150
    text = _prose(path)
    assert "No time limit is registered:" in text and "ended on their own" in text
    # reset lights the fuse a drawn number of units in: init says the start is drawn.
    assert "`reset` draws:" in text and "(varying: burnt)" in text


def test_an_env_that_never_ends_is_played_to_the_cap(tmp_path: Path) -> None:
    path = write_spec(
        "gymnasium.envs.classic_control.pendulum:PendulumEnv",
        tmp_path,
        budget=Budget(12, 30_000, 4, 2),
    )
    spec = load_spec(path)
    assert spec.levels.l3.steps == NATURAL_CAP
    text = _prose(path)
    assert "the env may never end on its own" in text and "levels.l3.steps" in text


def test_a_game_held_by_the_env_is_introspected_through_it(tmp_path: Path) -> None:
    # MinAtar's Gymnasium env holds the game's wrapper, which holds the game: the state is
    # the game's attributes, and the sources the modules of the objects' classes (loaded by
    # a computed module name no import statement shows).
    path = write_spec("init_factories:minatar_breakout", tmp_path, budget=Budget(20, 4000, 8, 4))
    spec = load_spec(path)
    fields = spec.state.fields
    assert fields["ball_x"] == "unwrapped.game.env.ball_x"
    assert fields["brick_map"] == "unwrapped.game.env.brick_map"
    assert {"ball_y", "ball_dir", "pos", "strike"} <= set(fields)
    assert spec.reference.sources[1:] == ["minatar.environment", "minatar.environments.breakout"]
    assert spec.randomness is None  # the sticky draw happens, but at 0 it decides nothing
    # The round trip again, independently of init's, through the verifier's harness.
    source, fresh = Reference(spec), Reference(spec)
    trip = prove(source, fresh, uniform(source.action_space), starts=6, steps=10, depth=30)
    assert trip.transitions > 0


@pytest.mark.parametrize(
    ("factory", "words"),
    [
        (
            "init_factories:minatar_breakout_sticky",
            ["`unwrapped.game.random`", "outcome depends on the draws", "sticky_action_prob"],
        ),
        (
            "init_factories:minatar_asterix",
            ["`unwrapped.game.env.entities`", "8 slots", "objects that come and go", "bridge"],
        ),
    ],
)
def test_what_init_cannot_infer_of_a_game_is_one_line(
    factory: str, words: list[str], tmp_path: Path
) -> None:
    # Run from tests/, where `python -m envport` finds the factories' module.
    result = run_envport(
        "init", factory, "--out", str(tmp_path), "--budget", BUDGET, cwd=Path(__file__).parent
    )
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("envport: ")]
    assert len(errors) == 1 and "Traceback" not in result.stderr
    assert all(word in errors[0] for word in words), errors[0]
    assert not (tmp_path / "envport.toml").exists()


def test_pendulum_bounds_cover_what_play_reaches(tmp_path: Path) -> None:
    path = write_spec("Pendulum-v1", tmp_path, budget=Budget(30, 8000, 10, 6))
    spec = load_spec(path)
    assert "unwrapped.last_u" in path.read_text()  # changes, never read by step: not state
    theta = spec.state.bounds["physics"]
    assert isinstance(theta.high, list) and theta.high[0] > 7.0  # past one turn: it spins
    assert spec.levels.l3.free_horizon is not None  # float32 rounding parts it (chaos)


def test_an_existing_spec_is_kept_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "envport.toml").write_text("name = 'mine'\n")
    with pytest.raises(InitError, match="exists; pass --force"):
        write_spec("CartPole-v1", tmp_path)
    result = run_envport("init", "CartPole-v1", "--out", str(tmp_path))
    assert result.returncode == 2 and "--force" in result.stderr
    assert (tmp_path / "envport.toml").read_text() == "name = 'mine'\n"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ("NoSuchEnv-v9", "not a registered Gymnasium id"),
        ("gymnasium:NoSuchEnv-v9", "not a registered Gymnasium id"),
        ("no_such_module_xyz:make", "cannot import"),
    ],
)
def test_an_unknown_env_is_one_line(env: str, message: str, tmp_path: Path) -> None:
    result = run_envport("init", env, "--out", str(tmp_path))
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_factory_entry(tmp_path: Path) -> None:
    path = write_spec(
        "gymnasium.envs.classic_control.cartpole:CartPoleEnv",
        tmp_path,
        budget=Budget(30, 8000, 10, 6),
    )
    data = tomllib.loads(path.read_text())
    assert data["reference"]["entry"] == "gymnasium.envs.classic_control.cartpole:CartPoleEnv"
    # No registry, no time limit: the physics alone, and L3 episodes of 500 steps.
    assert data["state"]["fields"] == {"physics": "unwrapped.state"}
    assert "step_counter" not in data["state"] and data["levels"]["l3"]["steps"] == 500


@pytest.mark.parametrize(
    ("factory", "fields"),
    [
        ("init_factories:made", {"elapsed_steps": "_elapsed_steps"}),
        ("init_factories:made_and_recorded", {"elapsed_steps": "env._elapsed_steps"}),
        ("init_factories:wrapped", {"elapsed_steps": "env.env._elapsed_steps"}),
        ("init_factories:bare", {}),
        ("gymnasium.envs.classic_control.cartpole:CartPoleEnv", {}),
    ],
)
def test_wrappers_bookkeeping_is_never_state(
    factory: str, fields: dict[str, str], tmp_path: Path
) -> None:
    # gym.make's env checker, order enforcing and episode statistics keep flags, previous
    # steps and running returns that change under step: none of them is the env's state.
    path = write_spec(factory, tmp_path, budget=Budget(30, 8000, 10, 6))
    data = tomllib.loads(path.read_text())
    assert data["state"]["fields"] == {**fields, "physics": "unwrapped.state"}
    # Named after the env's class, not the factory.
    assert data["name"] == "cartpole"
