"""The checks: which calls block the event loop, how badly, and the fix for each.

Calls are matched by their import-resolved dotted name (`import time as t; t.sleep`
resolves to `time.sleep`). Deliberately not flagged because they do not block:
`time.time`, `time.monotonic`, `time.perf_counter`, `os.getenv`, `os.path.join` and
other pure path arithmetic, `print` and `logging` (a blocked stdout pipe is real but
rare, and flagging every log line would bury the findings that matter).
"""

from __future__ import annotations

from dataclasses import dataclass

from envport.audit.model import Severity


@dataclass(frozen=True)
class Rule:
    """One check; its `id` is the SARIF ruleId."""

    id: str
    severity: Severity
    summary: str
    fix: str


SLEEP = Rule(
    "blocking-sleep",
    Severity.CRITICAL,
    "sleeps on the event loop thread",
    "use `await asyncio.sleep(...)`",
)
SYNC_HTTP = Rule(
    "sync-http",
    Severity.CRITICAL,
    "makes a synchronous HTTP request",
    "use an async client (`httpx.AsyncClient`, aiohttp) or `await asyncio.to_thread(...)`",
)
SYNC_SOCKET = Rule(
    "sync-socket",
    Severity.CRITICAL,
    "does blocking DNS or socket I/O",
    "use `await loop.getaddrinfo(...)` or `await asyncio.open_connection(...)`",
)
SYNC_LLM = Rule(
    "sync-llm-client",
    Severity.CRITICAL,
    "calls a model through a synchronous client",
    "use the async client (`AsyncOpenAI`, `AsyncAnthropic`, `litellm.acompletion`) and await it",
)
SUBPROCESS = Rule(
    "subprocess",
    Severity.CRITICAL,
    "waits for a child process",
    "use `await asyncio.create_subprocess_exec(...)`",
)
STDIN = Rule(
    "blocking-stdin",
    Severity.CRITICAL,
    "waits for standard input",
    "use `await asyncio.to_thread(input, prompt)`",
)
FILE_IO = Rule(
    "sync-file-io",
    Severity.HIGH,
    "does synchronous disk I/O",
    "run it in a thread with `await asyncio.to_thread(...)`, or use aiofiles",
)
DEEP_COPY = Rule(
    "deep-copy",
    Severity.HIGH,
    "deep-copies an object on the event loop",
    "avoid the copy (copy-on-write, a shared deepcopy memo) or "
    "`await asyncio.to_thread(copy.deepcopy, obj)`",
)
SERIALIZATION = Rule(
    "serialization",
    Severity.HIGH,
    "serialises a non-literal payload on the event loop",
    "`await asyncio.to_thread(...)` for large payloads, or a faster codec (orjson, msgpack)",
)
DYNAMIC_CODE = Rule(
    "dynamic-code",
    Severity.MEDIUM,
    "compiles or evaluates code inline",
    "compile once at import time, or run it in a `ProcessPoolExecutor` via `loop.run_in_executor`",
)
REGEX_IN_LOOP = Rule(
    "regex-compile-in-loop",
    Severity.MEDIUM,
    "compiles a regular expression on every loop iteration",
    "hoist `re.compile` to module level",
)
CPU_HEAVY_LOOP = Rule(
    "cpu-heavy-loop",
    Severity.MEDIUM,
    "runs a CPU-heavy loop inline",
    "vectorise it, or run it in a `ProcessPoolExecutor` via "
    "`await loop.run_in_executor(pool, f, ...)`",
)
COMPRESSION = Rule(
    "compression",
    Severity.MEDIUM,
    "compresses or decompresses data inline",
    "run it in a `ProcessPoolExecutor` via `loop.run_in_executor`, or "
    "`await asyncio.to_thread(...)`",
)
SHALLOW_MODEL_COPY = Rule(
    "shallow-model-copy",
    Severity.LOW,
    "copies a pydantic model's top-level fields (a shallow copy)",
    "cheap for small models; avoid it in per-step code on large ones",
)
SMALL_SYNC_IO = Rule(
    "small-sync-io",
    Severity.LOW,
    "makes a small synchronous filesystem call",
    "fine once; on a hot path cache the answer or `await asyncio.to_thread(...)`",
)

RULES: tuple[Rule, ...] = (
    SLEEP,
    SYNC_HTTP,
    SYNC_SOCKET,
    SYNC_LLM,
    SUBPROCESS,
    STDIN,
    FILE_IO,
    DEEP_COPY,
    SERIALIZATION,
    DYNAMIC_CODE,
    REGEX_IN_LOOP,
    CPU_HEAVY_LOOP,
    COMPRESSION,
    SHALLOW_MODEL_COPY,
    SMALL_SYNC_IO,
)


def _names(prefix: str, *members: str) -> list[str]:
    return [f"{prefix}.{member}" for member in members]


_HTTP_VERBS = ("get", "post", "put", "patch", "delete", "head", "options", "request")

# Import-resolved dotted name -> rule.
MODULE_CALLS: dict[str, Rule] = {
    "time.sleep": SLEEP,
    **dict.fromkeys(_names("requests", *_HTTP_VERBS, "Session", "session"), SYNC_HTTP),
    **dict.fromkeys(_names("httpx", *_HTTP_VERBS, "stream", "Client"), SYNC_HTTP),
    **dict.fromkeys(_names("urllib.request", "urlopen", "urlretrieve"), SYNC_HTTP),
    **dict.fromkeys(_names("urllib3", "request", "PoolManager"), SYNC_HTTP),
    **dict.fromkeys(_names("http.client", "HTTPConnection", "HTTPSConnection"), SYNC_HTTP),
    **dict.fromkeys(
        _names(
            "socket",
            "gethostbyname",
            "gethostbyname_ex",
            "gethostbyaddr",
            "getaddrinfo",
            "create_connection",
        ),
        SYNC_SOCKET,
    ),
    **dict.fromkeys(
        [
            "openai.OpenAI",
            "openai.AzureOpenAI",
            "openai.ChatCompletion.create",
            "openai.Completion.create",
            "openai.Embedding.create",
            "anthropic.Anthropic",
            "anthropic.AnthropicBedrock",
            "anthropic.AnthropicVertex",
            *_names(
                "litellm",
                "completion",
                "text_completion",
                "embedding",
                "image_generation",
                "transcription",
            ),
        ],
        SYNC_LLM,
    ),
    **dict.fromkeys(
        _names(
            "subprocess",
            "run",
            "call",
            "check_call",
            "check_output",
            "Popen",
            "getoutput",
            "getstatusoutput",
        ),
        SUBPROCESS,
    ),
    **dict.fromkeys(_names("os", "system", "popen", "wait", "waitpid"), SUBPROCESS),
    **dict.fromkeys(
        [
            "io.open",
            *_names(
                "os",
                "open",
                "remove",
                "unlink",
                "rename",
                "replace",
                "rmdir",
                "removedirs",
                "mkdir",
                "makedirs",
                "fsync",
                "truncate",
                "walk",
            ),
            *_names("glob", "glob", "iglob"),
            *_names("numpy", "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt"),
            *_names("numpy", "fromfile"),
            *_names("torch", "save", "load"),
        ],
        FILE_IO,
    ),
    "copy.deepcopy": DEEP_COPY,
    **dict.fromkeys(
        [
            *_names("os.path", "exists", "lexists", "isfile", "isdir", "islink"),
            *_names("os.path", "getsize", "getmtime", "getctime", "getatime", "samefile"),
            *_names("os", "stat", "lstat", "listdir", "scandir", "access"),
        ],
        SMALL_SYNC_IO,
    ),
    **dict.fromkeys(
        [
            f"{module}.{op}"
            for module in ("zlib", "gzip", "bz2", "lzma")
            for op in ("compress", "decompress")
        ],
        COMPRESSION,
    ),
}

# Every call into these modules touches the filesystem.
FILE_IO_MODULES = ("shutil", "tempfile")

# Serialisers: flagged unless the payload is a literal (see `is_trivial_payload`).
SERIALIZERS: frozenset[str] = frozenset(
    [
        *_names("json", "dumps", "loads", "dump", "load"),
        *_names("pickle", "dumps", "loads", "dump", "load"),
        *_names("msgpack", "packb", "unpackb", "pack", "unpack", "dumps", "loads"),
        *_names(
            "base64",
            "b64encode",
            "b64decode",
            "urlsafe_b64encode",
            "urlsafe_b64decode",
            "standard_b64encode",
            "standard_b64decode",
            "b32encode",
            "b32decode",
            "b16encode",
            "b16decode",
            "b85encode",
            "b85decode",
            "a85encode",
            "a85decode",
            "encodebytes",
            "decodebytes",
        ),
    ]
)

# Keyword names under which the serialisers above take their payload.
PAYLOAD_KEYWORDS = ("obj", "o", "s", "b", "data", "packed", "fp", "file")

# Only worth flagging inside a loop: `re` caches compiled patterns, but the cache lookup
# and a recompile on eviction still cost every iteration.
REGEX_COMPILE = "re.compile"

BUILTIN_CALLS: dict[str, Rule] = {
    "open": FILE_IO,
    "input": STDIN,
    "compile": DYNAMIC_CODE,
    "exec": DYNAMIC_CODE,
    "eval": DYNAMIC_CODE,
}

# Functions that run their callable argument off the event loop.
OFFLOAD_FUNCTIONS = frozenset(
    [
        "asyncio.to_thread",
        "anyio.to_thread.run_sync",
        "trio.to_thread.run_sync",
        "starlette.concurrency.run_in_threadpool",
    ]
)
OFFLOAD_METHODS = frozenset(["run_in_executor"])

# Instance kinds the resolver tracks through variables and `self.<attr>`.
PATH = "pathlib.Path"
PATH_CONSTRUCTORS = frozenset(
    [
        "pathlib.Path",
        "pathlib.PosixPath",
        "pathlib.WindowsPath",
        "pathlib.Path.home",
        "pathlib.Path.cwd",
    ]
)
# Path -> Path operations that do not block, so `(root / "x").parent.mkdir()` still types.
PATH_DERIVING_METHODS = frozenset(
    ["with_suffix", "with_name", "with_stem", "joinpath", "absolute", "expanduser"]
)
PATH_DERIVING_ATTRIBUTES = frozenset(["parent"])

PATH_METHODS: dict[str, Rule] = {
    **dict.fromkeys(
        [
            "read_text",
            "write_text",
            "read_bytes",
            "write_bytes",
            "open",
            "unlink",
            "rmdir",
            "mkdir",
            "touch",
            "rename",
            "replace",
            "glob",
            "rglob",
            "symlink_to",
            "hardlink_to",
        ],
        FILE_IO,
    ),
    **dict.fromkeys(
        ["exists", "is_file", "is_dir", "is_symlink", "stat", "lstat", "iterdir"], SMALL_SYNC_IO
    ),
}
# Method names that only pathlib-like objects have, flagged whatever the receiver is.
PATH_ONLY_METHODS = frozenset(["read_text", "write_text", "read_bytes", "write_bytes"])

# Pydantic's copy: `deep=True` walks the whole model (high, like copy.deepcopy); without it
# only the top-level field dict is copied, which is reported but low.
MODEL_COPY_METHOD = "model_copy"

# Synchronous client classes: constructing one in async code is the finding, and so is
# every method call on an instance kept in a variable or `self.<attr>`.
CLIENT_CONSTRUCTORS: dict[str, str] = {
    "requests.Session": "requests.Session",
    "requests.session": "requests.Session",
    "httpx.Client": "httpx.Client",
    "urllib3.PoolManager": "urllib3.PoolManager",
    "http.client.HTTPConnection": "http.client.HTTPConnection",
    "http.client.HTTPSConnection": "http.client.HTTPSConnection",
    "openai.OpenAI": "openai.OpenAI",
    "openai.AzureOpenAI": "openai.AzureOpenAI",
    "anthropic.Anthropic": "anthropic.Anthropic",
    "anthropic.AnthropicBedrock": "anthropic.AnthropicBedrock",
    "anthropic.AnthropicVertex": "anthropic.AnthropicVertex",
}

# Thresholds of the CPU-heavy loop heuristic (see scanner.py).
LARGE_RANGE = 100_000
NESTED_LOOPS = 2


def module_call_rule(qualname: str) -> Rule | None:
    """The rule for a call by import-resolved name, ignoring context-dependent checks."""
    if qualname in MODULE_CALLS:
        return MODULE_CALLS[qualname]
    module = qualname.split(".", 1)[0]
    if module in FILE_IO_MODULES and "." in qualname:
        return FILE_IO
    # `Path.read_text(p)`: the unbound form of a path method.
    prefix, _, method = qualname.rpartition(".")
    if prefix in PATH_CONSTRUCTORS and method in PATH_METHODS:
        return PATH_METHODS[method]
    return None
