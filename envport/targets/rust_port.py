"""The Rust backend's contract, driven inside a worker through ctypes.

A Rust port is a cdylib crate (`Cargo.toml` with `crate-type = ["cdylib"]`, std only, built
with `cargo build --release --offline`) exporting, as `#[no_mangle] extern "C"`:
  envport_abi_version() -> u32                      1
  envport_state_layout() -> *const c_char           "physics:4,elapsed_steps:1"
  envport_obs_layout() -> *const c_char             "float32:4" (dtype:shape, e.g. "uint8:2x3")
  envport_action_size() -> usize                    f64 values per action (1 for Discrete)
  envport_step(n, state: *mut f64, action: *const f64, obs: *mut c_void, reward: *mut f64,
               terminated: *mut u8, truncated: *mut u8) -> i32       0 ok, nonzero failed

State bridge: one row of f64 per env; the layout names reference state fields (the spec's
`[state]` names) with their value counts, in row order. The adapter flattens each field of
the reference state into its columns, so integer counters travel as f64 (exact below 2**53).
`envport_step` is the transition before any autoreset: it overwrites every state row with
the next state and writes that step's outputs into the caller's buffers.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from envport.targets.loader import ContractError
from envport.targets.names import TargetName

ABI_VERSION = 1
EXPORTS = (
    "envport_abi_version",
    "envport_state_layout",
    "envport_obs_layout",
    "envport_action_size",
    "envport_step",
)
OBS_DTYPES = ("float32", "float64", "int8", "int32", "int64", "uint8")


def parse_state_layout(text: str) -> list[tuple[str, int]]:
    """`"physics:4,elapsed_steps:1"` -> [("physics", 4), ("elapsed_steps", 1)]."""
    fields = []
    for part in text.split(","):
        name, _, width = part.strip().partition(":")
        if not name.isidentifier() or not width.isdigit() or int(width) == 0:
            raise ContractError(
                f"envport_state_layout() returned {text!r}; expected `name:count,...` "
                "(e.g. `physics:4,elapsed_steps:1`)"
            )
        fields.append((name, int(width)))
    return fields


def parse_obs_layout(text: str) -> tuple[np.dtype, tuple[int, ...]]:
    """`"float32:4"` -> (float32, (4,)); `"uint8:2x3"` -> (uint8, (2, 3))."""
    dtype, _, shape = text.strip().partition(":")
    dims = shape.split("x") if shape else []
    if dtype not in OBS_DTYPES or not dims or not all(d.isdigit() for d in dims):
        raise ContractError(
            f"envport_obs_layout() returned {text!r}; expected `dtype:shape` with dtype one "
            f"of {', '.join(OBS_DTYPES)} (e.g. `float32:4`)"
        )
    return np.dtype(dtype), tuple(int(d) for d in dims)


@dataclass
class Outputs:
    """Preallocated output buffers for n envs, and their addresses for the C call."""

    obs: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray

    @property
    def pointers(self) -> tuple[int, int, int, int]:
        return (
            self.obs.ctypes.data,
            self.reward.ctypes.data,
            self.terminated.ctypes.data,
            self.truncated.ctypes.data,
        )


class RustPort:
    backend = TargetName.RUST.value
    build_s = 0.0  # seconds to build (or find in the cache) the library, set by the loader

    def __init__(self, library: Path) -> None:
        lib = ctypes.CDLL(str(library))
        missing = [name for name in EXPORTS if not hasattr(lib, name)]
        if missing:
            listed = ", ".join(f"`{name}`" for name in missing)
            raise ContractError(f"the Rust port does not export {listed} (rust contract)")
        lib.envport_abi_version.restype = ctypes.c_uint32
        version = lib.envport_abi_version()
        if version != ABI_VERSION:
            raise ContractError(f"envport_abi_version() is {version}; expected {ABI_VERSION}")
        lib.envport_state_layout.restype = ctypes.c_char_p
        lib.envport_obs_layout.restype = ctypes.c_char_p
        lib.envport_action_size.restype = ctypes.c_size_t
        lib.envport_step.restype = ctypes.c_int32
        lib.envport_step.argtypes = [ctypes.c_size_t] + [ctypes.c_void_p] * 6
        self.lib = lib
        self.layout = parse_state_layout((lib.envport_state_layout() or b"").decode())
        self.state_size = sum(width for _, width in self.layout)
        self.obs_dtype, self.obs_shape = parse_obs_layout(
            (lib.envport_obs_layout() or b"").decode()
        )
        self.action_size = int(lib.envport_action_size())
        self._fields: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        self.session: np.ndarray | None = None

    def pack(self, states: dict[str, np.ndarray]) -> np.ndarray:
        """Reference states (fields stacked over envs) as the port's f64 rows."""
        count = len(next(iter(states.values())))
        rows = np.empty((count, self.state_size), dtype=np.float64)
        column = 0
        for name, width in self.layout:
            if name not in states:
                raise ContractError(
                    f"the port's state layout names `{name}`, which is not a reference state "
                    f"field (fields: {', '.join(states)})"
                )
            values = np.asarray(states[name])
            # Remembered so rows read back come out in the reference's shapes and dtypes.
            self._fields[name] = (values.shape[1:], values.dtype)
            values = values.reshape(count, -1)
            if values.shape[1] != width:
                raise ContractError(
                    f"state field `{name}` has {values.shape[1]} values per env; the port's "
                    f"state layout says {width}"
                )
            rows[:, column : column + width] = values
            column += width
        return rows

    def actions(self, actions: np.ndarray, count: int) -> np.ndarray:
        """Actions as f64 with the port's per-action size last: (count, ..., action_size)."""
        flat = np.ascontiguousarray(actions, dtype=np.float64)
        if flat.size % (count * self.action_size):
            raise ContractError(
                f"actions of shape {list(actions.shape)} do not split into "
                f"envport_action_size() = {self.action_size} values each"
            )
        return flat.reshape(count, -1, self.action_size)

    def outputs(self, *lead: int) -> Outputs:
        # Filled, not left empty: a row the port never writes must read the same on every
        # run (its divergence then replays field for field), and as unlike an answer as can
        # be (NaN, an integer type's largest value).
        return Outputs(
            obs=_unwritten((*lead, *self.obs_shape), self.obs_dtype),
            reward=_unwritten(lead, np.dtype(np.float64)),
            terminated=np.zeros(lead, dtype=np.uint8),
            truncated=np.zeros(lead, dtype=np.uint8),
        )

    def step_into(self, rows: np.ndarray, action: np.ndarray, out: Outputs) -> None:
        """One batched step: `rows` (n, state_size) updated in place, outputs into `out`."""
        status = self.lib.envport_step(
            len(rows), rows.ctypes.data, action.ctypes.data, *out.pointers
        )
        if status != 0:
            raise ContractError(f"envport_step returned {status} (the port failed or panicked)")

    def rollout(
        self,
        states: dict[str, np.ndarray],
        actions: np.ndarray,
        noise: np.ndarray | None = None,
        pad_to: Any = None,
    ) -> dict[str, Any]:
        del pad_to  # nothing is compiled at run time: any shape runs as it is
        _deterministic(noise)
        rows = self.pack(states)
        count, steps = actions.shape[:2]
        per_step = self.actions(actions, count).reshape(count, steps, self.action_size)
        # Time-major buffers so each step writes one contiguous slab; (B, T) view at the end.
        by_time = np.ascontiguousarray(per_step.transpose(1, 0, 2))
        out = self.outputs(steps, count)
        started = time.perf_counter()
        for t in range(steps):
            view = Outputs(out.obs[t], out.reward[t], out.terminated[t], out.truncated[t])
            self.step_into(rows, by_time[t], view)
        run_s = time.perf_counter() - started
        return _answer(out, run_s, lambda a: np.ascontiguousarray(np.swapaxes(a, 0, 1)))

    def step_batch(
        self,
        states: dict[str, np.ndarray],
        actions: np.ndarray,
        eager: bool = False,
        noise: np.ndarray | None = None,
        pad_to: Any = None,
        read_state: bool = False,
    ) -> dict[str, Any]:
        del eager, pad_to  # nothing is compiled at run time
        _deterministic(noise)
        rows = self.pack(states)
        action = self.actions(actions, len(rows))
        out = self.outputs(len(rows))
        started = time.perf_counter()
        self.step_into(rows, action, out)
        answer = _answer(out, time.perf_counter() - started, lambda a: a)
        if read_state:
            # The step wrote each env's next state into its row (as a session's step does).
            answer["state"] = self.unpack(rows)
        return answer

    # ---- L2: a live session of B envs, and batch-versus-single ----

    def unpack(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The port's rows as reference state fields (shapes and dtypes of the last pack)."""
        states, column = {}, 0
        for name, width in self.layout:
            default = ((width,) if width > 1 else (), np.dtype(np.float64))
            shape, dtype = self._fields.get(name, default)
            values = rows[:, column : column + width].reshape(len(rows), *shape)
            states[name] = (np.rint(values) if dtype.kind in "biu" else values).astype(dtype)
            column += width
        return states

    def session_load(self, states: dict[str, np.ndarray]) -> dict[str, Any]:
        """Load states into a live session; answers with the state read back (one trip)."""
        self.session = self.pack(states)
        return {"state": self.session_read()}

    def session_step(self, actions: np.ndarray, noise: np.ndarray | None = None) -> dict[str, Any]:
        _deterministic(noise)
        if self.session is None:
            raise ContractError("no session loaded")
        out = self.outputs(len(self.session))
        self.step_into(self.session, self.actions(actions, len(self.session)), out)
        return {**_answer(out, 0.0, lambda a: a), "state": self.session_read()}

    def session_read(self) -> dict[str, Any] | None:
        return None if self.session is None else self.unpack(self.session)

    def batch_vs_single(
        self, states: dict[str, np.ndarray], actions: np.ndarray, noise: np.ndarray | None = None
    ) -> dict[str, Any]:
        _deterministic(noise)
        batch = self.rollout(states, actions)
        singles = [
            self.rollout({k: v[i : i + 1] for k, v in states.items()}, actions[i : i + 1])
            for i in range(actions.shape[0])
        ]
        names = ("obs", "reward", "terminated", "truncated")
        single = {k: np.concatenate([s[k] for s in singles]) for k in names}
        return {"batch": {k: batch[k] for k in names}, "single": single}


def _deterministic(noise: np.ndarray | None) -> None:
    """The same calls as every backend (`PortBackend`), but the C ABI's step takes no noise:
    a stochastic env has no Rust port yet (docs/design.md, contract 3)."""
    if noise is not None:
        raise ContractError(
            "a Rust port's envport_step takes no noise: a stochastic env needs a JAX or NumPy port"
        )


def _answer(out: Outputs, run_s: float, arrange: Any) -> dict[str, Any]:
    return {
        "obs": arrange(out.obs),
        "reward": arrange(out.reward),
        "terminated": arrange(out.terminated != 0),
        "truncated": arrange(out.truncated != 0),
        "compile_s": 0.0,
        "run_s": run_s,
    }


class CrateSymbols:
    """A built crate's exported C functions by name, as the spec's L1 probes call them.

    A probe of a Rust module calls a `#[no_mangle] extern "C"` function the spec's contract
    names for it: `crate.call("physics_dynamics", state, np.float64(action))`. NumPy arrays
    pass as pointers to their data (made contiguous first; the function may write into
    them, and the probe reads them back), NumPy floats as f64, NumPy integers as i64.
    `returns` is the C result: None (void), "f64", "u8", "i32", "i64" or "usize".
    """

    RETURNS: ClassVar[dict[str, Any]] = {
        "f64": ctypes.c_double,
        "u8": ctypes.c_uint8,
        "i32": ctypes.c_int32,
        "i64": ctypes.c_int64,
        "usize": ctypes.c_size_t,
    }

    def __init__(self, library: Path) -> None:
        self.lib = ctypes.CDLL(str(library))

    def call(self, name: str, *args: Any, returns: str | None = None) -> Any:
        if not hasattr(self.lib, name):
            raise ContractError(
                f'the Rust port does not export `{name}` (a `#[no_mangle] pub extern "C"` '
                "function the spec's contract asks for)"
            )
        function = getattr(self.lib, name)
        if returns is not None and returns not in self.RETURNS:
            raise ValueError(f"returns={returns!r}: one of {', '.join(self.RETURNS)} or None")
        function.restype = None if returns is None else self.RETURNS[returns]
        converted: list[Any] = []
        for arg in args:
            if isinstance(arg, np.ndarray):
                if not arg.flags.c_contiguous:
                    raise ValueError("pass C-contiguous arrays (np.ascontiguousarray)")
                converted.append(ctypes.c_void_p(arg.ctypes.data))
            elif isinstance(arg, np.floating):
                converted.append(ctypes.c_double(float(arg)))
            elif isinstance(arg, np.integer):
                converted.append(ctypes.c_int64(int(arg)))
            else:
                raise TypeError(f"pass NumPy arrays, floats or integers, not {type(arg).__name__}")
        function.argtypes = [type(c) for c in converted]
        return function(*converted)


@dataclass
class BuiltCrate:
    """A built crate: its library, and the adapter over it (None when only built)."""

    library: Path
    port: RustPort | None


def load_rust_port(
    port_dir: Path,
    build_only: bool = False,
    before_load: Any = None,
    build_cache: Path | None = None,
    partial: list[str] | None = None,
    allow_crates: list[str] | None = None,
    allow_build_code: bool = False,
) -> BuiltCrate:
    """Build the crate (unless the cache has it) and load it; `build_only` just compiles.
    `before_load` runs between the two: the sandbox locks down before the library's code.
    `partial` names the modules of a crate still being generated (`build_crate`)."""
    from envport.targets.rust_build import build_crate

    started = time.perf_counter()
    library = build_crate(
        port_dir,
        root=build_cache,
        partial=partial,
        allow_crates=allow_crates,
        allow_build_code=allow_build_code,
    )
    if before_load is not None:
        before_load()
    if build_only:
        return BuiltCrate(library, None)
    port = RustPort(library)
    port.build_s = time.perf_counter() - started
    return BuiltCrate(library, port)


def _unwritten(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An output buffer holding what no step writes: NaN, or the type's largest value."""
    if np.issubdtype(dtype, np.floating):
        return np.full(shape, np.nan, dtype=dtype)
    if np.issubdtype(dtype, np.integer):
        return np.full(shape, np.iinfo(dtype).max, dtype=dtype)
    return np.zeros(shape, dtype=dtype)
