"""The reference's source text for the prompts: sliced to what a port needs (the env's
reset, step and what they use; see slicing.py), the whole text kept for a stuck repair;
then the package data files the spec names (`reference.data`), shown whole."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from envport.errors import SpecError
from envport.pipeline.sources.slicing import UnknownCut, slice_modules
from envport.spec import PortSpec

# Why a listed module is shown whole although slicing was asked for.
UNREACHED = "the env's code reaches it in a way slicing does not follow; every line is shown"
# Why a data file is shown: the code reads its tables, so a port needs them as the code does.
DATA = "a file of the reference's package that its code reads"
# The fence a data file's text is quoted in, by its suffix; any other is plain text.
DATA_LANGUAGES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml"}


@dataclass(frozen=True)
class ReferenceSource:
    module: str
    text: str
    # What slicing cut from `text` (one phrase per kind); empty for a whole module.
    cut: tuple[str, ...] = ()
    # Why a module is shown whole where the others are sliced (said in the prompt).
    whole: str = ""
    # A package's `__init__` (its relative imports are relative to itself).
    package: bool = False
    # Prefixes of modules it loads by a computed name that `reference.sources` lists none
    # under (`"minatar.environments." + game`): code no prompt carries.
    unlisted: tuple[str, ...] = ()
    # The env's `__init__`, `reset` and `step` reach nothing in it (envport check warns).
    unreached: bool = False
    # The fence's language: a module's is Python, a data file's its format's.
    language: str = "python"

    @property
    def lines(self) -> int:
        return len(self.text.splitlines())


def _entry_module(spec: PortSpec) -> str:
    return _entry_point(spec).partition(":")[0]


def _entry_point(spec: PortSpec) -> str:
    """`module:name` of the env class or factory the reference is made from."""
    prefix, _, rest = spec.reference.entry.partition(":")
    if prefix != "gymnasium":
        return spec.reference.entry  # `package.module:factory`
    import gymnasium

    try:
        entry_point = gymnasium.spec(rest).entry_point
    except gymnasium.error.Error as error:
        raise SpecError(f"reference.entry {spec.reference.entry!r}: {error}") from None
    if not isinstance(entry_point, str):
        raise SpecError(
            f"reference.entry {spec.reference.entry!r} is registered with a callable; "
            "list its module in reference.sources"
        )
    return entry_point


def read_rules(spec: PortSpec) -> str | None:
    """The rules document of a black-box spec (`reference.rules`), or None."""
    if spec.reference.rules is None:
        return None
    path = spec.harness_file(spec.reference.rules)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"key `reference.rules`: cannot read {path}: {error}") from None


def read_sources(spec: PortSpec) -> list[ReferenceSource]:
    """The modules `reference.sources` names, or the entry's own module when it names none;
    none at all for a black-box spec (a rules document instead, never the code).

    Found by the import system without executing the modules themselves.
    """
    if spec.reference.rules is not None:
        return []
    names = list(spec.reference.sources) or [_entry_module(spec)]
    return [_read_source(name) for name in names] + [_read_data(p) for p in spec.reference.data]


def package_path(name: str) -> Path | None:
    """`package/path` inside the installed package, found without importing it; None when
    the name has no `/` or no such package is installed (the path itself may not exist)."""
    package, _, inside = name.partition("/")
    try:
        found = importlib.util.find_spec(package) if package and inside else None
    except (ImportError, ValueError):
        found = None
    folders = list(found.submodule_search_locations or []) if found is not None else []
    return Path(folders[0]) / inside if folders else None


def _read_data(name: str) -> ReferenceSource:
    """`package/path` inside the installed package (found without importing it), or a
    SpecError naming the file and where it was looked for."""
    path = package_path(name)
    if path is None:
        raise SpecError(
            f"reference.data: {name!r} names no installed package's file "
            "(expected `package/path`, the package importable)"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = "no such file" if isinstance(error, FileNotFoundError) else str(error)
        raise SpecError(f"reference.data: {name!r} cannot be read at {path} ({reason})") from None
    language = DATA_LANGUAGES.get(path.suffix, "text")
    return ReferenceSource(name, text, whole=DATA, language=language)


def _read_source(name: str) -> ReferenceSource:
    """One listed module's text, or a SpecError naming it and why (a module the spec lists
    is never left out of the prompts silently)."""
    why = "has no Python source file to put in the prompts; list importable pure-Python modules"
    try:
        found = importlib.util.find_spec(name)
    except ModuleNotFoundError as error:
        found, why = None, f"cannot be found ({error})"
    except Exception as error:  # its package's own import fails: the reference's code, said
        found, why = None, f"cannot be imported ({type(error).__name__}: {error})"
    else:
        if found is None:
            why = "cannot be found (no module of that name on the import path)"
        elif found.origin is None:
            why = "cannot be found (a namespace package without a source file)"
    origin = found.origin if found is not None else None
    if origin is None or not origin.endswith(".py"):
        raise SpecError(f"reference.sources: module {name!r} {why}")
    try:
        with open(origin, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"reference.sources: module {name!r} cannot be read ({error})") from None
    return ReferenceSource(name, text, package=origin.endswith("__init__.py"))


def slice_sources(spec: PortSpec, sources: list[ReferenceSource]) -> list[ReferenceSource]:
    """`sources` cut to the env's `__init__`, `reset`, `step` and what they use, each with
    a note of what was cut; the whole modules when the env's code cannot be found in them."""
    data = [s for s in sources if s.language != "python"]
    sources = [s for s in sources if s.language == "python"]
    if not sources:
        return data
    module, _, name = _entry_point(spec).partition(":")
    # The attributes the harness reads (`unwrapped.state` -> `state`) stay, used or not.
    read = {path.rsplit(".", 1)[-1] for path in spec.state.fields.values()}
    packages = {s.module for s in sources if s.package}
    texts = [(s.module, s.text) for s in sources]
    try:
        slices = slice_modules(texts, (module, name), read, packages, spec.reference.cut)
    except UnknownCut as error:
        raise SpecError(f"reference.cut: {error}") from None
    if slices is None:
        return sources + data
    # A listed module is never dropped: slicing roots itself in one the entry reaches
    # nothing of (slicing.py); one still empty (nothing but imports) is shown whole.
    return [
        ReferenceSource(
            source.module,
            cut.text if cut.text.strip() else source.text,
            tuple(cut.cut) if cut.text.strip() else (),
            "" if cut.text.strip() else UNREACHED,
            source.package,
            tuple(cut.unlisted),
            cut.unreached,
        )
        for source, cut in zip(sources, slices, strict=True)
    ] + data
