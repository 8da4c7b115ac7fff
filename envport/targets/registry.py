"""The backends a port can target, in one place: names, detection, adapters, prompts, bench.

Adding a backend means an adapter module in this folder (implementing `PortBackend`,
`envport.targets.backend`) and one entry in `TARGETS`. Target names are the `TargetName`
members everywhere in verifiers, targets and serve; they are plain strings on the wire and
in the spec (`envport.spec.TARGETS` lists the same three).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from envport.cache_home import cache_home
from envport.serve import compile_cache, toolchain
from envport.serve.ops import LoadPort
from envport.spec import PortSpec
from envport.targets.loader import ContractError
from envport.targets.names import AUTO, TARGET_CHOICES, TARGET_NAMES, TargetName
from envport.targets.port_api import PortBackend
from envport.targets.rust_build import cache_key, cache_root
from envport.variant import compose_port

# The names are defined in names.py and offered here with the rest of the registry.
__all__ = ["AUTO", "TARGET_CHOICES", "TARGET_NAMES", "TargetName"]


def _load_jax(entry: ModuleType) -> PortBackend:
    from envport.targets.jax_port import JaxPort

    return JaxPort(entry)


def _load_numpy(entry: ModuleType) -> PortBackend:
    from envport.targets.numpy_port import NumpyPort

    return NumpyPort(entry)


@dataclass(frozen=True)
class Target:
    name: TargetName
    # How prompts and reports name the backend.
    title: str
    # The prompt template holding the target's notes (its contract, in the model's words).
    prompt_notes: str | None
    # A Python entry module the worker imports and wraps (None: a crate, built and loaded
    # through its C ABI by `rust_port`).
    adapter: Callable[[ModuleType], PortBackend] | None
    # The port draws its own noise and resets itself: the sampler, sampled-step and reset
    # checks apply (a Rust crate's ABI has neither).
    own_randomness: bool
    # The port is a Gymnasium `VectorEnv`, checked op by op against Gymnasium's autoreset.
    vector_env: bool
    # `envport bench`: the port's envs restart from reference start states (no reset).
    bench_needs_start_states: bool
    # Where a module of the spec lives in the port ("{}" is its name), the file names an
    # answer may write (their endings), and the language tag of their code blocks.
    module_file: str = "{}.py"
    port_files: tuple[str, ...] = (".py",)
    language: str = "python"

    def file_of(self, module: str) -> str:
        return self.module_file.format(module)

    def owns(self, port_dir: Path) -> bool:
        """Whether a port directory is this target's whatever the spec says (a crate)."""
        return self.name == TargetName.RUST and (port_dir / "Cargo.toml").is_file()


TARGETS: dict[TargetName, Target] = {
    TargetName.JAX: Target(TargetName.JAX, "JAX", "target_jax.j2", _load_jax, True, False, False),
    TargetName.NUMPY: Target(
        TargetName.NUMPY, "batched NumPy", "target_numpy.j2", _load_numpy, True, True, False
    ),
    # A crate: the manifest and one source file per module (the entry is `src/lib.rs`).
    TargetName.RUST: Target(
        TargetName.RUST,
        "Rust",
        "target_rust.j2",
        None,
        False,
        False,
        True,
        module_file="src/{}.rs",
        port_files=(".rs", "Cargo.toml"),
        language="rust",
    ),
}
# What `envport translate` can generate: the targets whose contract has prompt notes.
TRANSLATE_TARGETS = tuple(t.name.value for t in TARGETS.values() if t.prompt_notes is not None)
# Every file name ending a port of any target may have (what a port's files are read as).
PORT_FILES = tuple(dict.fromkeys(end for t in TARGETS.values() for end in t.port_files))


def target(name: str) -> Target:
    return TARGETS[TargetName(name)]


def python_target(entry: ModuleType) -> TargetName:
    """`--target auto` settled in the worker by the entry module: a VectorEnv is NumPy's."""
    return TargetName.NUMPY if hasattr(entry, "VectorEnv") else TargetName.JAX


@dataclass(frozen=True)
class TargetChoice:
    """Which target's module list applies to a port, as the worker needs it."""

    name: str  # a TargetName, or AUTO when the spec lists several and nothing settles it
    modules: list[dict]
    entry: str
    # What a crate's build may use, as the spec allows (`crate_policy`).
    allow_crates: tuple[str, ...] = ()
    allow_build_code: bool = False

    def load(
        self,
        port: Path,
        *,
        only_modules: bool = False,
        reverse: bool = False,
        compile_root: Path | None = None,
    ) -> LoadPort:
        """The worker's load request: the one place it is built. `compile_root`: where a
        JAX port's compilation cache directories are kept (default: the cache home's)."""
        crate = self.name == TargetName.RUST or (
            self.name == AUTO and TARGETS[TargetName.RUST].owns(port)
        )
        if crate:  # a compiler too old for any port is the user's to fix: one line, exit 2
            toolchain.require_rust()
        return LoadPort(
            port_dir=str(port.resolve()),
            modules=self.modules,
            entry=self.entry,
            target=self.name,
            only_modules=only_modules,
            reverse=reverse,
            build_cache=str(cache_root()) if crate else None,
            build_key=_crate_key(port, self.modules if only_modules else None) if crate else None,
            allow_crates=list(self.allow_crates),
            allow_build_code=self.allow_build_code,
            compile_cache=self._compile_cache(port, compile_root or cache_home() / "jax"),
        )

    def _compile_cache(self, port: Path, root: Path) -> str | None:
        """A JAX port's own compilation cache directory, keyed by its content."""
        if self.name != TargetName.JAX:
            return None
        try:
            found = compile_cache.port_cache_dir(root, port, self.name, self.entry)
        except OSError:
            return None  # a file it cannot read: the port's load says so, without a cache
        return str(found)


def _crate_key(port: Path, modules: list[dict] | None) -> str | None:
    """The driver's own key for the crate's library in the shared cache (None when rustc
    cannot say its version: the worker then builds alone and reports why)."""
    try:
        return cache_key(port, None if modules is None else [m["name"] for m in modules])
    except (ContractError, OSError):
        return None


def choose_target(spec: PortSpec, port: Path, requested: str) -> TargetChoice:
    """The target a port is checked as: the one asked for, else the spec's only one, else
    the one the port directory is named after, else a crate's."""
    if requested != AUTO:
        names = [requested]
    else:
        names = list(spec.targets)
        # A port directory named after its backend, or a Rust crate, settles an ambiguous spec.
        if port.name in spec.targets:
            names = [port.name]
        else:
            owning = [
                name for name in TargetName if name in spec.targets and target(name).owns(port)
            ]
            names = [owning[0].value] if owning else names
    chosen = names[0] if len(names) == 1 else AUTO
    listed = spec.target(chosen) if chosen != AUTO else spec.target("")
    return TargetChoice(
        chosen,
        [m.model_dump() for m in listed.modules],
        listed.entry,
        tuple(listed.allow_crates),
        listed.allow_build_code,
    )


def port_dir(spec: PortSpec, port: Path) -> Path:
    """The directory a worker loads for `port`: itself, or a variant's known-good port laid
    over its base's (envport.variant), composed under the cache."""
    return compose_port(spec.folders, port, cache_home() / "ports") if spec.folders else port


def load_request(spec: PortSpec, port: Path, requested: str = AUTO) -> LoadPort:
    """The load request of a whole port (verify, bench, optimise, serve)."""
    return choose_target(spec, port, requested).load(port_dir(spec, port))
