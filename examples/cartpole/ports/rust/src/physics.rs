//! CartPole dynamics for one env: one explicit Euler step, and the termination test.
//!
//! float64 throughout, like the reference (gymnasium's CartPoleEnv).

pub const GRAVITY: f64 = 9.8;
pub const MASSCART: f64 = 1.0;
pub const MASSPOLE: f64 = 0.1;
pub const TOTAL_MASS: f64 = MASSPOLE + MASSCART;
/// Half the pole's length.
pub const LENGTH: f64 = 0.5;
pub const POLEMASS_LENGTH: f64 = MASSPOLE * LENGTH;
pub const FORCE_MAG: f64 = 10.0;
pub const TAU: f64 = 0.02;
pub const THETA_THRESHOLD: f64 = 12.0 * 2.0 * std::f64::consts::PI / 360.0;
pub const X_THRESHOLD: f64 = 2.4;
pub const MAX_STEPS: f64 = 500.0;

/// Physics state [x, x_dot, theta, theta_dot] after one step with `action` (0 left, 1 right).
#[inline(always)]
pub fn dynamics(physics: [f64; 4], action: f64) -> [f64; 4] {
    let [x, x_dot, theta, theta_dot] = physics;
    let force = if action == 1.0 { FORCE_MAG } else { -FORCE_MAG };
    let (sintheta, costheta) = theta.sin_cos();
    let temp = (force + POLEMASS_LENGTH * theta_dot * theta_dot * sintheta) / TOTAL_MASS;
    let thetaacc = (GRAVITY * sintheta - costheta * temp)
        / (LENGTH * (4.0 / 3.0 - MASSPOLE * costheta * costheta / TOTAL_MASS));
    let xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS;
    [
        x + TAU * x_dot,
        x_dot + TAU * xacc,
        theta + TAU * theta_dot,
        theta_dot + TAU * thetaacc,
    ]
}

// Four comparisons as in the reference, not a range test: a NaN state is not terminated.
#[allow(clippy::manual_range_contains)]
#[inline(always)]
pub fn is_terminated(physics: &[f64; 4]) -> bool {
    let (x, theta) = (physics[0], physics[2]);
    x < -X_THRESHOLD || x > X_THRESHOLD || theta < -THETA_THRESHOLD || theta > THETA_THRESHOLD
}

/// `dynamics` through the C ABI, for envport's L1 probe: the 4 values at `physics`, in place.
///
/// # Safety
/// `physics` must address 4 f64 values, read and written.
#[no_mangle]
pub unsafe extern "C" fn physics_dynamics(physics: *mut f64, action: f64) {
    let values = std::slice::from_raw_parts_mut(physics, 4);
    let next = dynamics([values[0], values[1], values[2], values[3]], action);
    values.copy_from_slice(&next);
}

/// `is_terminated` through the C ABI, for envport's L1 probe: 1 or 0.
///
/// # Safety
/// `physics` must address 4 f64 values.
#[no_mangle]
pub unsafe extern "C" fn physics_is_terminated(physics: *const f64) -> u8 {
    let values = std::slice::from_raw_parts(physics, 4);
    is_terminated(&[values[0], values[1], values[2], values[3]]) as u8
}
