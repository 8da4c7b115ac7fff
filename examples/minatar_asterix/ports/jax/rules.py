"""MinAtar Asterix's rules for one env in JAX: sticky actions, the spawn, the player's move,
the objects' moves and what touching them does, the timers and the difficulty ramp.

Rows run 0 (top) to 9; the player stays on rows 1..8. Slot i's object is always on row
i + 1; slot arrays have 8 entries. Hand-written known-good port, not model output.
"""

import jax.numpy as jnp

SIZE = 10
SLOTS = 8
SLOT_ROWS = jnp.arange(1, SLOTS + 1)
STICKY = 0.1  # MinAtar's default sticky_action_prob
RAMP_INTERVAL = 100
NOOP, LEFT, UP, RIGHT, DOWN = 0, 1, 2, 3, 4
# The minimal action set, indexed as the wrapper's Python list is (negative indices count
# from its end).
ACTION_SET = jnp.array([NOOP, LEFT, UP, RIGHT, DOWN])


def sticky(action, last_action, draw):
    """The action taken: the last one when the sticky draw is below STICKY."""
    return jnp.where(draw < STICKY, last_action, ACTION_SET[action])


def spawn(taken, x, right, gold, spawn_timer, noise):
    """When the spawn timer is 0, an object enters the chosen free slot (noise[3] as a
    fraction of the free slots, in slot order), from the left moving right when noise[1] is
    below 1/2, gold when noise[2] is below 1/3."""
    free = ~taken
    count = free.sum()
    pick = jnp.floor(noise[3] * count).astype(jnp.int32)
    rank = jnp.cumsum(free) - 1
    chosen = free & (rank == pick) & (spawn_timer == 0) & (count > 0)
    lr = noise[1] < 0.5
    return (
        taken | chosen,
        jnp.where(chosen, jnp.where(lr, 0, SIZE - 1), x),
        jnp.where(chosen, lr, right),
        jnp.where(chosen, noise[2] < 1 / 3, gold),
    )


def move_player(player_x, player_y, action):
    player_x = jnp.where(action == LEFT, jnp.maximum(player_x - 1, 0), player_x)
    player_x = jnp.where(action == RIGHT, jnp.minimum(player_x + 1, SIZE - 1), player_x)
    player_y = jnp.where(action == UP, jnp.maximum(player_y - 1, 1), player_y)
    player_y = jnp.where(action == DOWN, jnp.minimum(player_y + 1, SIZE - 2), player_y)
    return player_x, player_y


def touch(taken, x, gold, player_x, player_y):
    """Gold on the player's square is picked up (+1 each, its slot freed); an enemy there
    ends the game. -> (taken, reward, hit)."""
    here = taken & (x == player_x) & (player_y == SLOT_ROWS)
    picked = here & gold
    return taken & ~picked, picked.sum().astype(jnp.float32), (here & ~gold).any()


def ramp(spawn_speed, move_speed, ramp_timer, ramp_index):
    """Every RAMP_INTERVAL + 1 frames while either speed is above 1: the spawn speed drops by
    1, and the move speed on odd ramps."""
    active = (spawn_speed > 1) | (move_speed > 1)
    counting = active & (ramp_timer >= 0)
    ramps = active & ~counting
    move_speed = jnp.where(
        ramps & (move_speed > 1) & (ramp_index % 2 == 1), move_speed - 1, move_speed
    )
    spawn_speed = jnp.where(ramps & (spawn_speed > 1), spawn_speed - 1, spawn_speed)
    ramp_index = jnp.where(ramps, ramp_index + 1, ramp_index)
    ramp_timer = jnp.where(counting, ramp_timer - 1, jnp.where(ramps, RAMP_INTERVAL, ramp_timer))
    return spawn_speed, move_speed, ramp_timer, ramp_index
