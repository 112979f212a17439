"""What a piece of code does to the kernel's names, read from its source and never run. Pure.

Rebuilding a variable (which cells make it), keeping one before the agent changes it (which names
a run assigns or mutates) and telling the model what a restart lost (which names its runs used)
all ask the same question of a cell's source, so one reading answers them: the names it binds
(assignments, augmented assignments, imports, `for` and `with` targets, definitions, `:=`), the
names it reads, the names it mutates in place (`df["x"] = ...`, `df.drop(..., inplace=True)`,
`items.append(...)`), the names it deletes, and what it does outside the kernel (runs
commands, runs code from elsewhere, reads files or the network, runs magics: `effects.py`).

IPython's syntax (`%magic`, `!ls`, `%%bash`, `x?`) is turned into Python by IPython's own
transformer first; the code a magic runs as Python (`%%time`, `%%capture`, `%time`) is read as
the cell's own. A source that still does not parse is reported as such, never guessed at.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from functools import lru_cache

from .effects import Effect, imported, of_attribute, of_call, of_name, unread

MUTATORS = frozenset(
    {
        "append", "extend", "insert", "pop", "remove", "clear", "update", "sort", "reverse",
        "add", "discard", "setdefault", "popitem", "fit", "partial_fit", "fit_transform",
        "resize", "fill", "put", "itemset", "sort_values", "sort_index",
    }
)  # fmt: skip
"""Methods that change their object (a DataFrame's only with `inplace=True`, said apart)."""
PYTHON_CELL_MAGICS = frozenset({"time", "capture", "prun"})
"""Cell magics that run their body as Python in the user's namespace."""
_BUILTINS = frozenset(dir(builtins)) | {"get_ipython", "display", "In", "Out", "exit", "quit"}


@dataclass(frozen=True, kw_only=True)
class CodeNames:
    """What one piece of code does to the namespace's names."""

    binds: frozenset[str] = frozenset()
    """Names it (re)binds: `x = ...`, `import pandas as pd`, `for row in ...`, `def f`."""
    reads: frozenset[str] = frozenset()
    """Names it reads that it did not bind first (builtins left out)."""
    mutates: frozenset[str] = frozenset()
    """Names whose object it changes in place."""
    deletes: frozenset[str] = frozenset()
    io: tuple[Effect, ...] = ()
    """What it does outside the kernel: `!curl`, `%run`, `read_csv`, `requests`."""
    imports: tuple[tuple[str, Effect], ...] = ()
    """Names its imports bind that reach outside (`sp` for `import subprocess as sp`)."""
    parsed: bool = True
    why: str = ""
    """Why it could not be read (a syntax error), when `parsed` is False."""

    @property
    def changes(self) -> frozenset[str]:
        """The names a run may leave different: bound, mutated or deleted."""
        return self.binds | self.mutates | self.deletes

    @property
    def touches(self) -> frozenset[str]:
        """Every name it uses or makes."""
        return self.changes | self.reads


@lru_cache(maxsize=4096)
def code_names(source: str) -> CodeNames:
    """What `source` (a cell, or run_code's code; IPython syntax allowed) does to names; kept
    for the last 4,096 sources, as a notebook's cells are read again at each plan."""
    try:
        tree = _parse(source)
    except SyntaxError as exc:
        return CodeNames(parsed=False, why=f"{exc.msg} (line {exc.lineno})")
    except (ValueError, RecursionError) as exc:
        return CodeNames(parsed=False, why=str(exc) or type(exc).__name__)
    reader = _Reader()
    for statement in tree.body:
        reader.visit(statement)
    return CodeNames(
        binds=frozenset(reader.binds),
        reads=frozenset(reader.reads - _BUILTINS),
        mutates=frozenset(reader.mutates),
        deletes=frozenset(reader.deletes),
        io=tuple(dict.fromkeys(reader.io)),
        imports=tuple(dict.fromkeys(reader.imports)),
    )


def _parse(source: str) -> ast.Module:
    """The source's tree: as Python first (most cells are; IPython's transformer leaves them
    as they are, and it costs twice the parse), else made Python by IPython."""
    try:
        return ast.parse(source)
    except SyntaxError:
        python = as_python(source)
        if python == source:
            raise
    return ast.parse(python)


def as_python(source: str) -> str:
    """The source with IPython's syntax made Python; a Python cell magic's body as it is."""
    stripped = source.lstrip()
    if stripped.startswith("%%"):
        head, _, body = stripped.partition("\n")
        if head[2:].split(maxsplit=1)[0:1] and head[2:].split()[0] in PYTHON_CELL_MAGICS:
            return as_python(body)
        source = stripped  # another language's cell (%%bash): a run_cell_magic call
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython is a dependency
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # the transformer raises on input it cannot make sense of
        return source


class _Reader(ast.NodeVisitor):
    """Walks top-level statements in order: a name read after the code bound it is not a read."""

    def __init__(self) -> None:
        self.binds: set[str] = set()
        self.reads: set[str] = set()
        self.mutates: set[str] = set()
        self.deletes: set[str] = set()
        self.io: list[Effect] = []
        self.imports: list[tuple[str, Effect]] = []
        self.modules: dict[str, str] = {}
        """The modules its imports bound, by name (`o` for `import os as o`)."""

    def _read(self, name: str) -> None:
        if name not in self.binds:
            self.reads.add(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._read(node.id)
            self.io += of_name(node.id)
        elif isinstance(node.ctx, ast.Store):
            self.binds.add(node.id)
        else:
            self.deletes.add(node.id)
            self.binds.discard(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)  # the value is read before the targets are bound
        for target in node.targets:
            self._target(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._target(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._read(node.target.id)
            self.binds.add(node.target.id)
        else:
            self._target(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.binds.add(node.target.id)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._target(node.target)
        for statement in [*node.body, *node.orelse]:
            self.visit(statement)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._target(item.optional_vars)
        for statement in node.body:
            self.visit(statement)

    visit_AsyncWith = visit_With

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name != "*":
                self.binds.add(alias.asname or alias.name.split(".")[0])
            if isinstance(node, ast.Import):
                self.modules[alias.asname or alias.name.split(".")[0]] = alias.name.split(".")[0]
        found = imported(node)
        self.imports += found
        self.io += [effect for _, effect in found]

    visit_ImportFrom = visit_Import

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.deletes.add(target.id)
                self.binds.discard(target.id)
            else:
                self._target(target)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self._free(node)
        self.binds.add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expression in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(expression)
        self._free(node)
        self.binds.add(node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._free(node)

    def visit_ListComp(self, node: ast.AST) -> None:
        self._free(node)

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = node.value.id if isinstance(node.value, ast.Name) else None
        self.io += of_attribute(self.modules.get(root or "", root), node.attr)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        function = node.func
        effects, sources = of_call(node)
        self.io += effects
        for magic, source in sources:
            self._magic(magic, source)
        if isinstance(function, ast.Attribute):
            inplace = any(
                k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            )
            root = _root(function.value)
            if root is not None and (inplace or function.attr in MUTATORS):
                self.mutates.add(root)
        self.generic_visit(node)

    def _magic(self, magic: str, source: str) -> None:
        """The code a Python magic runs: read as the cell's own (`%timeit` only reads: what it
        binds stays in its own scope)."""
        try:
            tree = _parse(source)
        except (SyntaxError, ValueError, RecursionError):
            self.io.append(unread(magic))
            return
        reader = _Reader() if magic.endswith("timeit") else self
        for statement in tree.body:
            reader.visit(statement)
        if reader is not self:
            self.io += reader.io
            for name in reader.reads:
                self._read(name)

    def _target(self, target: ast.expr) -> None:
        """A name bound, or the object under an item or attribute assignment mutated."""
        if isinstance(target, ast.Name):
            self.binds.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element)
        elif isinstance(target, ast.Starred):
            self._target(target.value)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            root = _root(target)
            if root is not None:
                self._read(root)
                self.mutates.add(root)
            self.visit(target.value)
            if isinstance(target, ast.Subscript):
                self.visit(target.slice)

    def _free(self, scope: ast.AST) -> None:
        """A function's, class's or comprehension's reads of names it does not bind itself:
        the outer names it needs when it runs."""
        inner = _Reader()
        for child in ast.iter_child_nodes(scope):
            if isinstance(child, ast.arguments):
                inner.binds |= {a.arg for a in [*child.posonlyargs, *child.args, *child.kwonlyargs]}
                inner.binds |= {a.arg for a in (child.vararg, child.kwarg) if a is not None}
        local = {
            n.id
            for n in ast.walk(scope)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        inner.binds |= local
        body = getattr(scope, "body", None)
        parts = body if isinstance(body, list) else [body] if body is not None else []
        if not parts:  # a comprehension: its generators and element
            parts = [n for n in ast.iter_child_nodes(scope)]
        for part in parts:
            if isinstance(part, ast.comprehension):
                inner.visit(part.iter)
                for condition in part.ifs:
                    inner.visit(condition)
            elif isinstance(part, ast.AST):
                inner.visit(part)
        for name in inner.reads - local:
            self._read(name)
        self.io += inner.io
        self.mutates |= inner.mutates - local


def _root(node: ast.expr) -> str | None:
    """The name an attribute or item chain starts at: `df` of `df["a"].values`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
