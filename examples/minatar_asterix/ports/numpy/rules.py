"""MinAtar Asterix's rules on a batch: sticky actions, the spawn, the player's move, the
objects' moves and what touching them does, the timers and the difficulty ramp.

Rows run 0 (top) to 9; the player stays on rows 1..8. Slot i's object is always on row i + 1.
Arrays are [B] or [B, 8] (slots). Hand-written known-good port, not model output.
"""

import numpy as np

SIZE = 10
SLOTS = 8
SLOT_ROWS = np.arange(1, SLOTS + 1)
STICKY = 0.1  # MinAtar's default sticky_action_prob
RAMP_INTERVAL = 100
# The game's full action indices: its minimal set is no-op, left, up, right, down.
NOOP, LEFT, UP, RIGHT, DOWN = 0, 1, 2, 3, 4
# The wrapper looks an action up in its minimal action set, a Python list, so -1..-5 are
# accepted and count from its end; indexing this array does the same.
ACTION_SET = np.array([NOOP, LEFT, UP, RIGHT, DOWN])


def sticky(actions, last_action, draw):
    """-> the action taken: the last one when the sticky draw is below STICKY."""
    return np.where(draw < STICKY, last_action, ACTION_SET[np.asarray(actions)])


def spawn(taken, x, right, gold, spawn_timer, noise):
    """When the spawn timer is 0, an object enters the chosen free slot (noise[:, 3] as a
    fraction of the free slots, in slot order), from the left moving right when noise[:, 1]
    is below 1/2, gold when noise[:, 2] is below 1/3. -> (taken, x, right, gold)."""
    due = spawn_timer == 0
    free = ~taken
    count = free.sum(axis=1)
    pick = np.floor(noise[:, 3] * count).astype(np.int64)
    # The pick-th free slot: the slot where the running count of free slots passes pick.
    rank = np.cumsum(free, axis=1) - 1
    chosen = free & (rank == pick[:, None]) & (due & (count > 0))[:, None]
    lr = noise[:, 1] < 0.5
    is_gold = noise[:, 2] < 1 / 3
    taken = taken | chosen
    x = np.where(chosen, np.where(lr, 0, SIZE - 1)[:, None], x)
    right = np.where(chosen, lr[:, None], right)
    gold = np.where(chosen, is_gold[:, None], gold)
    return taken, x, right, gold


def move_player(player_x, player_y, action):
    """-> (player_x, player_y): one square left/right (columns 0..9) or up/down (rows 1..8)."""
    player_x = np.where(action == LEFT, np.maximum(player_x - 1, 0), player_x)
    player_x = np.where(action == RIGHT, np.minimum(player_x + 1, SIZE - 1), player_x)
    player_y = np.where(action == UP, np.maximum(player_y - 1, 1), player_y)
    player_y = np.where(action == DOWN, np.minimum(player_y + 1, SIZE - 2), player_y)
    return player_x, player_y


def touch(taken, x, gold, player_x, player_y):
    """Objects on the player's square: gold is picked up (+1 each, its slot freed), an enemy
    ends the game. -> (taken, reward float64[B], hit bool[B])."""
    here = taken & (x == player_x[:, None]) & (SLOT_ROWS[None, :] == player_y[:, None])
    picked = here & gold
    reward = picked.sum(axis=1).astype(np.float64)
    hit = (here & ~gold).any(axis=1)
    return taken & ~picked, reward, hit


def ramp(spawn_speed, move_speed, ramp_timer, ramp_index):
    """The difficulty ramp, once a frame while either speed is above 1: every
    RAMP_INTERVAL + 1 frames the spawn speed drops by 1, and the move speed on odd ramps.
    -> (spawn_speed, move_speed, ramp_timer, ramp_index)."""
    active = (spawn_speed > 1) | (move_speed > 1)
    counting = active & (ramp_timer >= 0)
    ramps = active & ~counting
    move_speed = np.where(
        ramps & (move_speed > 1) & (ramp_index % 2 == 1), move_speed - 1, move_speed
    )
    spawn_speed = np.where(ramps & (spawn_speed > 1), spawn_speed - 1, spawn_speed)
    ramp_index = np.where(ramps, ramp_index + 1, ramp_index)
    ramp_timer = np.where(counting, ramp_timer - 1, np.where(ramps, RAMP_INTERVAL, ramp_timer))
    return spawn_speed, move_speed, ramp_timer, ramp_index


def transition(state, actions, noise):
    """One frame, MinAtar's Environment.act then Env.act, on a dict of [B, ...] arrays (the
    state's fields). Inputs unmodified. -> (next state dict, reward float64[B]). A terminal
    env keeps its state (but its last action, which the wrapper sets first) and earns 0."""
    s = {name: np.array(value) for name, value in state.items()}
    live = ~s["terminal"]
    action = sticky(actions, s["last_action"], noise[:, 0])
    s["last_action"] = action

    taken, x, right, gold = spawn(
        s["slot_taken"], s["slot_x"], s["slot_right"], s["slot_gold"], s["spawn_timer"], noise
    )
    spawn_timer = np.where(s["spawn_timer"] == 0, s["spawn_speed"], s["spawn_timer"])
    player_x, player_y = move_player(s["player_x"], s["player_y"], action)
    taken, reward, hit = touch(taken, x, gold, player_x, player_y)

    moving = s["move_timer"] == 0
    move_timer = np.where(moving, s["move_speed"], s["move_timer"])
    moved_x = np.where(moving[:, None] & taken, x + np.where(right, 1, -1), x)
    # An object leaving the screen is gone (its slot freed, its numbers kept as the bridge
    # reads a free slot: 0).
    gone = taken & ((moved_x < 0) | (moved_x > SIZE - 1))
    taken = taken & ~gone
    moved_x = np.where(taken, moved_x, np.where(gone, 0, moved_x))
    after, more, hit_after = touch(taken, moved_x, gold, player_x, player_y)
    taken = np.where(moving[:, None], after, taken)
    reward = reward + np.where(moving, more, 0.0)
    hit = hit | (moving & hit_after)

    spawn_speed, move_speed, ramp_timer, ramp_index = ramp(
        s["spawn_speed"], s["move_speed"], s["ramp_timer"], s["ramp_index"]
    )
    new = {
        "player_x": player_x,
        "player_y": player_y,
        "slot_taken": taken,
        # A free slot reads 0 everywhere, as the bridge reads the game's None.
        "slot_x": np.where(taken, moved_x, 0),
        "slot_right": right & taken,
        "slot_gold": gold & taken,
        "spawn_timer": spawn_timer - 1,
        "move_timer": move_timer - 1,
        "spawn_speed": spawn_speed,
        "move_speed": move_speed,
        "ramp_timer": ramp_timer,
        "ramp_index": ramp_index,
        "terminal": s["terminal"] | hit,
    }
    for name, value in new.items():
        keep = live if value.ndim == 1 else live[:, None]
        s[name] = np.where(keep, value, s[name])
    return s, np.where(live, reward, 0.0)
