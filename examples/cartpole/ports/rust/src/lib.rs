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

use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use physics::{dynamics, is_terminated, MAX_STEPS};

const STATE_SIZE: usize = 5;
const OBS_SIZE: usize = 4;
// Below this many envs per thread, starting a thread costs more than it saves.
const MIN_CHUNK: usize = 512;

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

fn step_chunk(
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

fn threads_for(n: usize) -> usize {
    // Asked once: on Linux the answer comes from reading cgroup files.
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |c| c.get()));
    cores.min(n / MIN_CHUNK).max(1)
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
    let state = std::slice::from_raw_parts_mut(state, n * STATE_SIZE);
    let action = std::slice::from_raw_parts(action, n);
    let obs = std::slice::from_raw_parts_mut(obs as *mut f32, n * OBS_SIZE);
    let reward = std::slice::from_raw_parts_mut(reward, n);
    let terminated = std::slice::from_raw_parts_mut(terminated, n);
    let truncated = std::slice::from_raw_parts_mut(truncated, n);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let threads = threads_for(n);
        if threads == 1 {
            step_chunk(state, action, obs, reward, terminated, truncated);
            return;
        }
        let per = n.div_ceil(threads);
        std::thread::scope(|scope| {
            let parts = state
                .chunks_mut(per * STATE_SIZE)
                .zip(obs.chunks_mut(per * OBS_SIZE))
                .zip(action.chunks(per).zip(reward.chunks_mut(per)))
                .zip(terminated.chunks_mut(per).zip(truncated.chunks_mut(per)));
            let mut parts: Vec<_> = parts.collect();
            // The calling thread takes the last chunk instead of idling at the join.
            let own = parts.pop();
            for (((s, o), (a, r)), (te, tr)) in parts {
                scope.spawn(move || step_chunk(s, a, o, r, te, tr));
            }
            if let Some((((s, o), (a, r)), (te, tr))) = own {
                step_chunk(s, a, o, r, te, tr);
            }
        });
    }));
    outcome.map_or(1, |_| 0)
}
