"""L1 probes for the NumPy MiniGrid port's module functions (harness code, not generated).

`call` runs in the worker with the port module, on a batch of one; `expect` reads one
reference transition. The observation is the image (7 x 7 x 3, C order) then the direction.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

# Empty sees through walls: its reference marks every cell of the view visible, so there
# is no visibility probe here (DoorKey has one).
SEE_THROUGH_WALLS = True
FIELDS = ("grid", "agent_pos", "agent_dir", "carrying")


def _batch(state):
    return tuple(np.asarray(state[name], dtype=np.int64)[None] for name in FIELDS)


@probe("rules.transition")
def transition(module, before, action, after):
    grid, pos, direction, carrying, count, reward, terminated = module.transition(
        *_batch(before),
        np.asarray(before["step_count"], dtype=np.int64)[None],
        np.asarray([action]),
        256,
    )
    return {
        "grid": grid[0],
        "agent_pos": pos[0],
        "agent_dir": direction[0],
        "carrying": carrying[0],
        "step_count": count[0],
        "reward": reward[0],
        "terminated": terminated[0],
    }


@transition.expect
def _(before, action, after, transition):
    return {
        **{name: after[name] for name in FIELDS},
        "step_count": after["step_count"],
        "reward": np.float64(transition.reward),
        "terminated": np.bool_(transition.terminated),
    }


@probe("view.observe")
def observe(module, before, action, after):
    return {"obs": module.observe(*_batch(after), SEE_THROUGH_WALLS)[0]}


@observe.expect
def _(before, action, after, transition):
    return {"obs": transition.obs}
