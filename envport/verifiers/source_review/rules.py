"""What a port's source may use: the allowlists and refused names of the static review.

An environment's step is arithmetic on its state. Whatever lets code see where it runs
(the process, its files, its clock, its environment variables, the interpreter's modules
and frames) is refused by rule: imports outside the target's allowlist; names, attributes
and imports that reach such things; dynamic import and evaluation. The lists below are
the rule's data, kept here so the review's code and docs/isolation.md name the same things.
"""

from __future__ import annotations

import builtins
import sys


def words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Imports every Python target allows: the standard library's pure computation a step may
# use, nothing that reads the process. Left out on purpose: `operator` (`attrgetter` is an
# attribute access by text), `string` (`Formatter` looks up fields by text), `random` (the
# process's own seed: a port draws from numpy's or jax's generators). `typing`'s one way to
# evaluate text (`get_type_hints`) is refused below.
COMMON_IMPORTS = words(
    "__future__ abc bisect collections copy dataclasses enum functools heapq itertools math "
    "numbers typing"
)
# Per target. A JAX port gets jax (jax.numpy, jax.lax, jax.random, ...) and numpy for its
# constants; chex and flax are not in it (a port's state is a NamedTuple or a dataclass;
# a spec may add them with `allow_imports`).
PYTHON_IMPORTS: dict[str, tuple[str, ...]] = {
    "numpy": (*COMMON_IMPORTS, "numpy"),
    "jax": (*COMMON_IMPORTS, "numpy", "jax"),
}

# Builtins a step may call; every other builtin name (open, input, eval, exec, compile,
# globals, locals, vars, dir, id, hash, breakpoint, help, exit, memoryview...) is refused
# wherever it is used, even rebound, so a port renames its own variable instead.
SAFE_BUILTINS = frozenset(
    words(
        "abs all any bin bool bytearray bytes callable chr classmethod complex dict "
        "divmod enumerate filter float format frozenset hex int isinstance issubclass "
        "iter len list map max min next object oct ord pow print property range repr "
        "reversed round set slice sorted staticmethod str sum super tuple type zip True "
        "False None NotImplemented Ellipsis"
    )
) | frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
BUILTIN_NAMES = frozenset(dir(builtins))
# Builtins allowed only with a constant attribute name (then judged as that attribute):
# `getattr(x, "a" + "b")` is an attribute the review cannot read.
ATTRIBUTE_BUILTINS = frozenset({"getattr", "setattr", "delattr", "hasattr"})

# Special methods a port may name on an object (`super().__init__()`): each gives a bound
# method, whose internals are dunders again. Every other dunder attribute (`__dict__`,
# `__class__`, `__globals__`, `__subclasses__`, `__builtins__`, `__code__`...) is refused.
ALLOWED_DUNDERS = frozenset(
    words(
        "__init__ __post_init__ __call__ __len__ __getitem__ __setitem__ __iter__ "
        "__next__ __enter__ __exit__ __eq__ __repr__ __str__ __array__"
    )
)

# Attribute names refused on any object: a way to the interpreter's modules, frames and
# code, the process, a file or the clock, whatever the object is (`np.os`, `gen.gi_frame`,
# `type(x).mro()`, `arr.ctypes`, `np.fromfile`, `jax.devices()`).
REFUSED_ATTRIBUTES: dict[str, str] = {
    **dict.fromkeys(
        words(
            "os sys posix builtins subprocess importlib inspect gc platform socket pathlib "
            "shutil environ getenv getpid getppid getuid geteuid getcwd modules"
        ),
        "reads the process or its environment",
    ),
    **dict.fromkeys(
        words(
            "ctypes ctypeslib fromfile tofile loadtxt genfromtxt fromregex memmap open_memmap "
            "DataSource savetxt savez savez_compressed f2py distutils as_strided"
        ),
        "reads files or raw memory",
    ),
    **dict.fromkeys(
        words(
            "loads Unpickler serialize_executable deserialize_and_load ffi pycapsule "
            "compilation_cache set_cache_dir"
        ),
        "loads code the review cannot read (a pickle, a foreign function, a cached program)",
    ),
    **dict.fromkeys(("datetime64", "timedelta64", "perf_counter"), "reads the clock"),
    **dict.fromkeys(
        words(
            "devices device local_devices device_count local_device_count default_backend "
            "get_backend xla_bridge sharding addressable_shards "
            "process_index process_count profiler distributed monitoring show_config "
            "geterr seterr geterrcall seterrcall get_printoptions getbufsize setbufsize "
            "show_runtime"
        ),
        "reads the machine or the library's configuration",
    ),
    **dict.fromkeys(
        words(
            "mro get_type_hints ForwardRef f_back f_globals f_locals f_builtins f_code format_map"
        ),
        "introspects the interpreter or evaluates text",
    ),
}
# Why a module outside every allowlist is refused, for the modules a hostile port reaches
# for first (any other is refused as outside the target's imports).
MODULE_REASONS: dict[str, str] = {
    **{name: why for name, why in REFUSED_ATTRIBUTES.items() if name in sys.stdlib_module_names},
    **dict.fromkeys(words("time datetime calendar sched"), "reads the clock"),
    **dict.fromkeys(words("io os.path glob tempfile mmap fcntl pickle shelve"), "reads files"),
    **dict.fromkeys(
        words("runpy pkgutil zipimport code codeop marshal"), "loads or evaluates code"
    ),
    **dict.fromkeys(
        words("threading multiprocessing signal resource pwd grp"), "reads the process"
    ),
}
# Prefixes of the attributes of generators, coroutines, tracebacks and code objects: the
# way to a frame, and from a frame to every module's globals, without a dunder.
REFUSED_PREFIXES = ("gi_", "cr_", "ag_", "tb_", "co_")

# Standard-library names an allowed library also uses for its own API (`np.random`,
# `jnp.select`, `np.array`, `jnp.trace`): not refused as an attribute of a module, where
# every other standard-library module's name is (`np.time`, `jax.warnings`).
LIBRARY_API_NAMES = frozenset(
    words(
        "random math cmath array copy select trace types typing string numbers operator "
        "enum abc dataclasses functools itertools collections bisect heapq statistics "
        "struct keyword token decimal fractions"
    )
)
# Refused as an attribute of a module (or a name imported from one), beside the
# standard library's module names and private names: the libraries' file, test and
# configuration entry points (`np.load`, `np.lib.format`, `np.testing`, `jax.config`).
REFUSED_MODULE_ATTRIBUTES = frozenset({"load", "save", "lib", "testing", "test", "config"})
STDLIB_MODULES = frozenset(sys.stdlib_module_names) - LIBRARY_API_NAMES

# A Rust port: the `std` (or `core`, `alloc`) modules it may name. Left out: env, fs, io,
# net, os, path, process, time, arch (inline assembly, the CPU's clock), backtrace.
# `thread` stays for a port's worker pool; `thread::available_parallelism` is the one view
# of the machine it gives, and a port needs it to size the pool.
RUST_STD_MODULES = frozenset(
    words(
        "alloc any array ascii borrow boxed cell char clone cmp collections convert "
        "default error f32 f64 ffi fmt future hash hint i8 i16 i32 i64 i128 isize iter "
        "marker mem num ops option panic pin prelude primitive ptr rc result slice str "
        "string sync task thread u8 u16 u32 u64 u128 usize vec"
    )
)
# Crates that are the operating system's interface: refused as a path's root unless the
# spec allows them (`targets.rust.allow_crates`).
RUST_SYSTEM_CRATES = frozenset({"libc", "nix", "rustix", "winapi", "windows_sys", "windows"})
# Macros that read the build's environment or files, or run assembly.
RUST_MACROS: dict[str, str] = {
    **dict.fromkeys(("env", "option_env"), "reads the build's environment"),
    **dict.fromkeys(("include", "include_str", "include_bytes"), "reads a file at build time"),
    **dict.fromkeys(("asm", "global_asm", "naked_asm"), "runs inline assembly"),
    # The harness's build settings (profile, features) are not a user's.
    "cfg": "reads the build's configuration",
}
