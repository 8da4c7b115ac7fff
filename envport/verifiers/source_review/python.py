"""The static review of one Python file of a port, on its syntax tree (never imported).

Each refusal names the line and the rule it broke (envport.verifiers.source_review.rules
holds the lists). The review reads the code as a hostile author would write it: an import
is judged by the module it loads whatever it is called (`import os as o`), a builtin by
its name wherever it appears (`f = eval`), an attribute by its name on any object and, on
a module, also by what it is (`np.lib`, `np._core`), `getattr` with a name it cannot read
is refused, and a string annotation is reviewed as the code it is when evaluated.
"""

from __future__ import annotations

import ast
import string
from dataclasses import dataclass

from envport.verifiers.source_review import rules
from envport.verifiers.source_review.constants import (
    Strings,
    loop_names,
    module_constants,
    rebound,
)


@dataclass(frozen=True)
class Finding:
    """One refused construct: where, what, why, and the rule's name."""

    file: str
    line: int
    what: str
    why: str
    rule: str

    def text(self) -> str:
        return f"{self.file}:{self.line}: {self.what}: {self.why} [rule: {self.rule}]"


@dataclass(frozen=True)
class Allowed:
    """What this review admits: the target's name (for messages), the importable modules
    (each admits its submodules), and the port's own module names (files in the port)."""

    target: str
    imports: tuple[str, ...]
    own_modules: frozenset[str]

    def admits(self, module: str) -> bool:
        return any(module == name or module.startswith(f"{name}.") for name in self.imports)


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _plain_format(text: str) -> bool:
    """A format string whose fields are plain positions or names (`{0}`, `{x:.3f}`), not
    attribute or item lookups (`{0.gi_frame}`) that str.format would carry out."""
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(text) if field]
    except ValueError:
        return False
    return not any("." in field or "[" in field for field in fields)


class _Review(ast.NodeVisitor):
    def __init__(
        self, file: str, allowed: Allowed, modules: tuple[set[str], set[str]], strings: Strings
    ) -> None:
        self.file = file
        self.allowed = allowed
        # Names `import` binds to a module, and those a `from X import` may (a submodule).
        self.imported, maybe = modules
        self.modules = self.imported | maybe
        # Names read as the base of an attribute (`np` in `np.zeros`), the one use of a module.
        self.bases: set[int] = set()
        self.strings = strings
        # The enclosing loops' variables and what they iterate (None: rebound in the body).
        self.loops: list[dict[str, ast.expr | None]] = []
        self.found: list[Finding] = []
        self.line: int | None = None  # a string annotation's line, while reviewing it

    def refuse(self, node: ast.AST, what: str, why: str, rule: str) -> None:
        line = self.line or int(getattr(node, "lineno", 0))
        self.found.append(Finding(self.file, line, what, why, rule))

    # Imports.
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module(node, alias.name, f"import {alias.name}")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:  # the port's own modules, relatively: reviewed as files of their own
            for alias in node.names:
                self._attribute_name(node, alias.name, module=False, private_ok=True)
            return
        module = node.module or ""
        shown = f"from {module} import {', '.join(a.name for a in node.names)}"
        if not self._module(node, module, shown):
            return
        for alias in node.names:
            if alias.name == "*":
                why = "a star import binds names the review cannot see"
                self.refuse(node, f"`{shown}`", why, "import")
            else:
                # A bridge imports a library's private names (pgx's `_step_det`).
                self._attribute_name(node, alias.name, module=True, private_ok=True)

    def _module(self, node: ast.AST, module: str, shown: str) -> bool:
        root = module.split(".")[0]
        if not self.allowed.admits(module):
            if root in self.allowed.own_modules and root not in rules.STDLIB_MODULES:
                why = (
                    f"imports the port's own `{root}` by an absolute name, which a user's "
                    f"process resolves to whatever is installed as `{root}`; import it "
                    f"relatively (`from . import {root}`)"
                )
            elif root in rules.MODULE_REASONS:
                why = (
                    f"`{root}` {rules.MODULE_REASONS[root]}; an environment's step needs none of it"
                )
            else:
                why = (
                    f"`{root}` is outside the {self.allowed.target} target's imports "
                    f"({', '.join(self.allowed.imports)}); a bridge's package goes in the "
                    f"spec's `targets.{self.allowed.target}.allow_imports`"
                )
            self.refuse(node, f"`{shown}`", why, "import")
            return False
        for part in module.split(".")[1:]:
            self._attribute_name(node, part, module=True, private_ok=True)
        return True

    # Names.
    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            return
        name = node.id
        if _dunder(name):
            why = "reads the interpreter's module machinery (a dunder name)"
            self.refuse(node, f"`{name}`", why, "dunder")
        elif name in rules.ATTRIBUTE_BUILTINS:
            why = "only a call with a constant attribute name is allowed"
            self.refuse(node, f"`{name}` as a value", why, "dynamic")
        elif name in rules.BUILTIN_NAMES and name not in rules.SAFE_BUILTINS:
            why = (
                "a builtin outside the step's allowlist (files, evaluation, the interpreter); "
                "a port's own variable of this name must be renamed"
            )
            self.refuse(node, f"`{name}`", why, "builtin")
        elif name in self.imported and id(node) not in self.bases:
            why = (
                "a module used as a value (passed, stored or returned) takes its attributes "
                f"out of the review's sight; use it as `{name}.attribute`"
            )
            self.refuse(node, f"`{name}`", why, "module")

    # Attributes.
    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name):
            self.bases.add(id(node.value))
        self._attribute_name(node, node.attr, module=self._module_rooted(node.value))
        if node.attr == "format":
            receiver = node.value
            text = receiver.value if isinstance(receiver, ast.Constant) else None
            if not (isinstance(text, str) and _plain_format(text)):
                why = "str.format can look up attributes by text (`{0.gi_frame}`); use an f-string"
                self.refuse(node, "`.format`", why, "dynamic")
        self.generic_visit(node)

    def _module_rooted(self, node: ast.expr) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.modules

    def _attribute_name(
        self, node: ast.AST, name: str, *, module: bool, private_ok: bool = False
    ) -> None:
        shown = f"`.{name}`"
        if _dunder(name):
            if name not in rules.ALLOWED_DUNDERS:
                why = "a dunder attribute reaches the interpreter's internals"
                self.refuse(node, shown, why, "dunder")
            return
        refused = rules.REFUSED_ATTRIBUTES.get(name)
        if refused is None and name.startswith(rules.REFUSED_PREFIXES):
            refused = "reaches a frame or code object"
        if refused is not None:
            self.refuse(node, shown, refused, "attribute")
            return
        if not module:
            return
        if name in rules.STDLIB_MODULES or name in rules.REFUSED_MODULE_ATTRIBUTES:
            why = "a module's way to the standard library, files or configuration"
            self.refuse(node, shown, why, "attribute")
        elif name.startswith("_") and not private_ok:
            self.refuse(node, shown, "a library's private internals", "attribute")

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        # `case object(__class__=c)` reads the attribute each keyword names.
        for name in node.kwd_attrs:
            self._attribute_name(node, name, module=False)
        self.generic_visit(node)

    # Calls with an attribute name as text.
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in rules.ATTRIBUTE_BUILTINS:
            self._attribute_call(node, func.id)
            for child in [*node.args, *node.keywords]:
                self.visit(child)
            return
        self.generic_visit(node)

    def _attribute_call(self, node: ast.Call, builtin: str) -> None:
        if len(node.args) < 2:
            return
        target, name = node.args[0], node.args[1]
        if isinstance(target, ast.Name):
            self.bases.add(id(target))
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            self._attribute_name(node, name.value, module=self._module_rooted(target))
            if not name.value.isidentifier():
                self.refuse(node, f"`{builtin}`", "an attribute name that is not a name", "dynamic")
            return
        listed = self.strings.values(name, self.loops)
        if listed is not None:  # names the review can list, each judged as written
            for value in sorted(listed):
                self._attribute_name(node, value, module=self._module_rooted(target))
                if not value.isidentifier():
                    self.refuse(
                        node, f"`{builtin}`", "an attribute name that is not a name", "dynamic"
                    )
            return
        # Not even on a method's `self`: `C.method(module, name)` passes anything as `self`.
        why = (
            "an attribute name the review cannot list (computed): use a constant, or a loop "
            "over a module constant of names (a tuple)"
        )
        self.refuse(node, f"`{builtin}`", why, "dynamic")

    # Loops: what their variables take, for the names `getattr` is given.
    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        bound = loop_names(node.target, node.iter)
        self.loops.append(
            {name: (None if rebound(node.body, name) else it) for name, it in bound.items()}
        )
        for statement in node.body:
            self.visit(statement)
        self.loops.pop()
        for statement in node.orelse:
            self.visit(statement)

    visit_AsyncFor = visit_For

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        results = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        pushed = 0
        for generator in node.generators:
            self.visit(generator.iter)
            self.visit(generator.target)
            bound = loop_names(generator.target, generator.iter)
            tail = [*generator.ifs, *results]
            self.loops.append(
                {name: (None if rebound(tail, name) else it) for name, it in bound.items()}
            )
            pushed += 1
            for condition in generator.ifs:
                self.visit(condition)
        for result in results:
            self.visit(result)
        del self.loops[len(self.loops) - pushed :]

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    # Functions: string annotations.
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.returns is not None:
            self._annotation(node.returns)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_arg(self, node: ast.arg) -> None:
        if node.annotation is not None:
            self._annotation(node.annotation)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._annotation(node.annotation)
        self.generic_visit(node)

    def _annotation(self, annotation: ast.expr) -> None:
        """A string annotation is code to whatever evaluates it (`typing.get_type_hints`,
        `functools.singledispatch`): reviewed as that code, at the string's line."""
        for node in ast.walk(annotation):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                try:
                    parsed = ast.parse(node.value.strip(), mode="eval")
                except SyntaxError:
                    continue
                outer, self.line = self.line, self.line or node.lineno
                self.visit(parsed.body)
                self.line = outer


def _module_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Names the file binds to an imported module, and those an allowed library's
    `from X import name` may hand a module to (`from jax import numpy as jnp`)."""
    imported: set[str] = set()
    maybe: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            maybe.update(a.asname or a.name for a in node.names)
    return imported, maybe


def review_python(
    source: bytes, file: str, allowed: Allowed, elsewhere: frozenset[str] = frozenset()
) -> list[Finding]:
    """The refusals in one file, in line order. A file that does not parse has none: it
    cannot run either, and its import fails the check with Python's own message."""
    try:
        tree = ast.parse(source, filename=file)
    except (SyntaxError, ValueError):
        return []
    assert isinstance(tree, ast.Module)
    # The names the port's other files use (`elsewhere`) may reach a constant of this one.
    strings = Strings(module_constants(tree, elsewhere))
    review = _Review(file, allowed, _module_names(tree), strings)
    review.visit(tree)
    return sorted(review.found, key=lambda finding: finding.line)
