"""L1 probes for the NumPy MiniGrid port's module functions (harness code, not generated).

`call` runs in the worker with the port module, on a batch of one; `expect` reads one
reference transition. The observation is the image (7 x 7 x 3, C order) then the direction.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

# DoorKey does not see through walls: walls and closed doors hide what is behind them.
SEE_THROUGH_WALLS = False
FIELDS = ("grid", "agent_pos", "agent_dir", "carrying")


def _batch(state):
    return tuple(np.asarray(state[name], dtype=np.int64)[None] for name in FIELDS)


@probe("rules.transition")
def transition(module, before, action, after):
    grid, pos, direction, carrying, count, reward, terminated = module.transition(
        *_batch(before),
        np.asarray(before["step_count"], dtype=np.int64)[None],
        np.asarray([action]),
        250,
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


@probe("view.visibility")
def visibility(module, before, action, after):
    grid, pos, direction, _ = _batch(after)
    return {"visible": module.visibility(module.view_cells(grid, pos, direction))[0]}


@visibility.expect
def _(before, action, after, transition):
    # What the reference's own process_vis marked: every cell of its image that is not
    # "unseen" (a visible empty cell reads (1, 0, 0)).
    return {"visible": transition.obs[:-1].reshape(7, 7, 3)[..., 0] != 0}


# ---- a door in front: the locked-door rule's inputs, arranged ----
# Uniform draws over the grid rarely put a door in front of an agent that carries something
# (about 1 in 1000 of them also toggle a locked one), so the rule "a locked door opens only
# for a key of its colour" would go unchecked. This probe runs the same transition from
# drawn states arranged so that the cell in front is a door of any colour and state, and the
# agent carries a key (half the time: the rule's subject) or else nothing, a key, a ball or
# a box, of the door's colour or any colour (half each: the rule turns on that match); the
# drawn action, or toggle (the action the rule is about) half the time.
DOOR, KEY, TOGGLE = 4, 5, 5
CARRIED = ((1, 0, 0), 5, 6, 7)  # nothing (an empty cell's code), key, ball, box
STEPS = ((1, 0), (0, 1), (-1, 0), (0, -1))  # DIR_TO_VEC: right, down, left, up


def _door_in_front(state, action, pick):
    grid = np.array(state["grid"], dtype=np.int64)
    cells = grid.reshape(5, 5, 3)
    x, y = (int(v) for v in state["agent_pos"])
    direction = int(state["agent_dir"])
    dx, dy = STEPS[direction]
    if not (1 <= x + dx <= 3 and 1 <= y + dy <= 3):
        # Facing the border wall: in a 3 x 3 interior the opposite cell is inside.
        direction = (direction + 2) % 4
        dx, dy = STEPS[direction]
    colour = pick(0, 5)
    cells[x + dx, y + dy] = (DOOR, colour, pick(0, 2))
    kind = KEY if pick(0, 1) else CARRIED[pick(0, len(CARRIED) - 1)]
    if isinstance(kind, tuple):
        carrying = np.array(kind, dtype=np.int64)
    else:
        carrying = np.array([kind, colour if pick(0, 1) else pick(0, 5), 0], dtype=np.int64)
    arranged = {
        **state,
        "grid": cells.reshape(grid.shape),
        "agent_dir": np.asarray(direction, dtype=np.asarray(state["agent_dir"]).dtype),
        "carrying": carrying.astype(np.asarray(state["carrying"]).dtype),
    }
    return arranged, TOGGLE if pick(0, 1) else action


facing_door = probe("rules.facing_door")(transition.call)
facing_door.expect(transition.expect_fn)
facing_door.arrange(_door_in_front)
