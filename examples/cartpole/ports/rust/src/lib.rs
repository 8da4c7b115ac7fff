//! CartPole-v1 behind envport's Rust port ABI (a cdylib loaded by envport's worker).
//!
//! State layout, one row of `STATE_SIZE` f64 per env, named after the spec's state fields:
//!   physics:4        [x, x_dot, theta, theta_dot]   (reference: env.unwrapped.state)
//!   elapsed_steps:1  steps taken in the episode     (reference: TimeLimit._elapsed_steps)
//! Action: one f64 per env (0.0 pushes left, 1.0 pushes right).
//! Observation: float32[4], the physics state rounded to float32 as the reference does.
//!
//! `envport_step` is the transition before any autoreset: it overwrites each env's state
//! row with the next state and writes that step's observation, reward and end flags.

mod physics;
mod pool;

use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use physics::{dynamics, is_terminated, MAX_STEPS};

const STATE_SIZE: usize = 5;
const OBS_SIZE: usize = 4;
// Envs per unit of work shared between threads: large enough that handing one over costs
// little next to stepping it, small enough that two cores finish close together.
const CHUNK: usize = 256;

#[no_mangle]
pub extern "C" fn envport_abi_version() -> u32 {
    1
}

#[no_mangle]
pub extern "C" fn envport_state_layout() -> *const c_char {
    c"physics:4,elapsed_steps:1".as_ptr()
}

#[no_mangle]
pub extern "C" fn envport_obs_layout() -> *const c_char {
    c"float32:4".as_ptr()
}

#[no_mangle]
pub extern "C" fn envport_action_size() -> usize {
    1
}

/// One env's transition: reads and rewrites its state row, writes its outputs.
#[inline(always)]
fn step_one(
    state: &mut [f64],
    action: f64,
    obs: &mut [f32],
    reward: &mut f64,
    terminated: &mut u8,
    truncated: &mut u8,
) {
    let next = dynamics([state[0], state[1], state[2], state[3]], action);
    let elapsed = state[4] + 1.0;
    state[..4].copy_from_slice(&next);
    state[4] = elapsed;
    for (o, s) in obs.iter_mut().zip(next.iter()) {
        *o = *s as f32;
    }
    *reward = 1.0;
    *terminated = is_terminated(&next) as u8;
    *truncated = (elapsed >= MAX_STEPS) as u8;
}

fn step_rows(
    state: &mut [f64],
    action: &[f64],
    obs: &mut [f32],
    reward: &mut [f64],
    terminated: &mut [u8],
    truncated: &mut [u8],
) {
    let rows = state
        .chunks_exact_mut(STATE_SIZE)
        .zip(obs.chunks_exact_mut(OBS_SIZE))
        .zip(action.iter().zip(reward.iter_mut()))
        .zip(terminated.iter_mut().zip(truncated.iter_mut()));
    for (((s, o), (a, r)), (te, tr)) in rows {
        step_one(s, *a, o, r, te, tr);
    }
}

/// The caller's buffers, shared with the pool's helpers for the length of one call.
struct Task {
    n: usize,
    state: *mut f64,
    action: *const f64,
    obs: *mut f32,
    reward: *mut f64,
    terminated: *mut u8,
    truncated: *mut u8,
}

/// Steps envs [start, end) of the task; chunks never overlap, so each row has one writer.
unsafe fn step_range(task: &Task, start: usize, end: usize) {
    let len = end - start;
    step_rows(
        std::slice::from_raw_parts_mut(task.state.add(start * STATE_SIZE), len * STATE_SIZE),
        std::slice::from_raw_parts(task.action.add(start), len),
        std::slice::from_raw_parts_mut(task.obs.add(start * OBS_SIZE), len * OBS_SIZE),
        std::slice::from_raw_parts_mut(task.reward.add(start), len),
        std::slice::from_raw_parts_mut(task.terminated.add(start), len),
        std::slice::from_raw_parts_mut(task.truncated.add(start), len),
    );
}

unsafe fn step_chunk(task: usize, index: usize) {
    let task = &*(task as *const Task);
    let start = index * CHUNK;
    step_range(task, start, (start + CHUNK).min(task.n));
}

/// Steps `n` envs. Returns 0, or 1 if the step panicked (the buffers are then undefined).
///
/// # Safety
/// Each pointer must address `n` rows of its buffer: state f64[n*5] (read and written),
/// action f64[n], obs f32[n*4], reward f64[n], terminated u8[n], truncated u8[n].
#[no_mangle]
pub unsafe extern "C" fn envport_step(
    n: usize,
    state: *mut f64,
    action: *const f64,
    obs: *mut c_void,
    reward: *mut f64,
    terminated: *mut u8,
    truncated: *mut u8,
) -> i32 {
    if n == 0 {
        return 0;
    }
    let task = Task {
        n,
        state,
        action,
        obs: obs as *mut f32,
        reward,
        terminated,
        truncated,
    };
    let chunks = n.div_ceil(CHUNK);
    let ok = if chunks < 2 {
        catch_unwind(AssertUnwindSafe(|| step_range(&task, 0, n))).is_ok()
    } else {
        pool::run_chunks(chunks, &task as *const Task as usize, step_chunk)
    };
    if ok {
        0
    } else {
        1
    }
}
