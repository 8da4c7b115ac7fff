"""L1 probes for the JAX MinAtar Seaquest port's module functions (harness code, not
generated).

`call` runs in the worker with the port module and the step's noise (recorded from the
game's own RandomState); `expect` reads one reference transition. The arranged inputs are
the NumPy probes' (the probes run in the worker one file each, so they are repeated here).
"""

import numpy as np

from envport.verifiers.draws.probes import probe

UP = 2


# The port's step, compiled once per module: called eagerly, its unrolled walks over every
# slot dispatch thousands of small operations a call.
_COMPILED: dict[int, object] = {}


def _compiled_step(module):
    import jax

    if id(module) not in _COMPILED:
        _COMPILED[id(module)] = jax.jit(module.step_given_noise)
    return _COMPILED[id(module)]


@probe("env.step_given_noise")
def step_given_noise(module, before, action, after, noise):
    import jax.numpy as jnp

    state = module.state_from_reference(before)
    obs, new, reward, _, _, _ = _compiled_step(module)(
        jnp.asarray(noise, jnp.float32),
        state,
        jnp.asarray(action, jnp.int32),
        module.default_params(),
    )
    return {**module.state_to_reference(new), "reward": reward, "obs": obs}


@step_given_noise.expect
def _(before, action, after, transition):
    return {**after, "reward": np.float64(transition.reward), "obs": transition.obs}


# ---- surfacing: its rules' inputs, arranged ----
# Drawn states rarely arrive at the surface (the sub one row below it moving up, or on it
# after diving), and play never does with the enemy spawn at its fastest while the move
# speed can still rise (the ramp lowers the move speed first), so the ramp's "spawn speed
# already 1" branch would go unchecked. This probe arranges an arrival: from row 1 moving up
# or on the surface having dived, with any divers aboard (six half the time: the full-crew
# bonus), any oxygen, and the spawn and move speeds near their ends.
def _surfacing(state, action, pick):
    arranged = {**state, "terminal": np.bool_(False), "surface": np.bool_(False)}
    if pick(0, 1):
        arranged["sub_y"], action = np.int64(1), UP
    else:
        arranged["sub_y"] = np.int64(0)
        action = action if action != 4 else 0  # not diving again at once
    arranged["diver_count"] = np.int64(6 if pick(0, 1) else pick(-3, 6))
    arranged["oxygen"] = np.int64(pick(0, 200))
    arranged["e_spawn_speed"] = np.int64(pick(1, 3))
    arranged["move_speed"] = np.int64(pick(2, 5))
    arranged["ramp_index"] = np.int64(pick(0, 19))
    return arranged, action


surfacing = probe("env.surfacing")(step_given_noise.call)
surfacing.expect(step_given_noise.expect_fn)
surfacing.arrange(_surfacing)


# ---- a bullet and its targets: the hit rules' inputs, arranged ----
# A friendly bullet meets an enemy on a drawn screen about once in a few dozen draws; this
# probe puts the first friendly bullet one square from a fish or sub (its way or the
# other), the enemy's move timer at 0 or not, so both "bullet hits" and "enemy runs into the
# bullet" are checked with a live sub.
def _bullet_near_enemy(state, action, pick):
    arranged = {**state, "terminal": np.bool_(False)}
    bullets = np.array(state["f_bullets"], dtype=np.int64)
    x, y = pick(1, 8), pick(1, 8)
    bullets[0] = (x, y, pick(0, 1))
    arranged["f_bullets"] = bullets
    arranged["f_bullets.length"] = np.int64(max(1, int(state["f_bullets.length"])))
    name = "e_fish" if pick(0, 1) else "e_subs"
    enemies = np.array(state[name], dtype=np.int64)
    enemies[0, :4] = (x + pick(-1, 1), y, pick(0, 1), pick(0, 1))
    arranged[name] = enemies
    arranged[f"{name}.length"] = np.int64(max(1, int(state[f"{name}.length"])))
    return arranged, action


bullet_near_enemy = probe("env.bullet_near_enemy")(step_given_noise.call)
bullet_near_enemy.expect(step_given_noise.expect_fn)
bullet_near_enemy.arrange(_bullet_near_enemy)


# ---- several enemies on one bullet's square: who takes what there, arranged ----
# Drawn screens almost never put two enemies of a list on the square a bullet reaches, so
# the order rules there go unchecked: a bullet sinks the first fish (or sub) on its square
# in list order, and of enemies moving onto a bullet the walk (last slot first) meets the
# last one first. This probe puts the first bullet one square from its target, and two
# enemies of one list either already on the target (still: their timers not at 0) or on
# either side of it, both moving onto it (timers at 0).
def _crowded_square(state, action, pick):
    arranged = {**state, "terminal": np.bool_(False)}
    bullets = np.array(state["f_bullets"], dtype=np.int64)
    x, y, right = pick(2, 7), pick(1, 8), pick(0, 1)
    target = x + (1 if right else -1)
    bullets[0] = (x, y, right)
    arranged["f_bullets"] = bullets
    arranged["f_bullets.length"] = np.int64(max(1, int(state["f_bullets.length"])))
    name = "e_fish" if pick(0, 1) else "e_subs"
    enemies = np.array(state[name], dtype=np.int64)
    if pick(0, 1):  # both on the target, not moving, told apart by direction or timer
        enemies[0, :4] = (target, y, 0, pick(1, 5))
        enemies[1, :4] = (target, y, 1, pick(1, 5))
    else:  # from either side onto the target
        enemies[0, :4] = (target - 1, y, 1, 0)
        enemies[1, :4] = (target + 1, y, 0, 0)
    arranged[name] = enemies
    arranged[f"{name}.length"] = np.int64(max(2, int(state[f"{name}.length"])))
    return arranged, action


crowded_square = probe("env.crowded_square")(step_given_noise.call)
crowded_square.expect(step_given_noise.expect_fn)
crowded_square.arrange(_crowded_square)
