"""Write ``graphrag_orm/sync/_generated.py``: typed blocking twins of ``GraphRag`` and its services.

    python scripts/make_sync.py           # (re)write the module (``make sync``)
    python scripts/make_sync.py --check   # exit 1 when the checked-in module is stale (``make lint``)

The async code is the source; nothing sync is written by hand (neomodel's way, with
``make-unasync``). What is read, and how:

- the services: every public attribute that ``GraphRag.__init__`` builds from a class
  (``self.x = Service(...)``, possibly ``... if ... else None``) or annotates
  (``self.x: Service | None = ...``), when that class has public coroutine methods;
  the ``Store`` is left out (its calls take async work functions). An attribute that
  may be ``None`` gives a property that raises ``ConfigurationError`` when it is;
- each service's public methods, by ``inspect`` (coroutine, async generator or plain),
  and their signatures from the source (``ast``): parameters, annotations and defaults
  are copied as written, and every name they use is imported from where the
  service's module imports it (a private name stops the script);
- a coroutine ``-> T`` becomes ``-> T``, run on the sync loop; an async generator or a
  method returning ``AsyncIterator[T]``/``AsyncGenerator[T, ...]``/``AsyncIterable[T]``
  becomes ``-> Iterator[T]``; a plain method is forwarded as it is;
- ``GraphRag`` itself: its public coroutine methods, where one returning ``GraphRag``
  returns the twin, ``close`` also stops the loop, and ``__aenter__``/``__aexit__``
  become ``__enter__``/``__exit__``; ``sync`` is left out.

Anything else (a decorator, an unannotated return, a name that cannot be imported) stops
the script with a message rather than writing a twin that would drift. The output is
put through ``ruff check --select I --fix`` and ``ruff format`` so it is what ``make
lint`` expects.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import importlib
import inspect
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["generate", "main"]

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "graphrag_orm" / "sync" / "_generated.py"
FACADE_MODULE = "graphrag_orm.facade"
FACADE_CLASS = "GraphRag"
TWIN_OF_FACADE = "SyncGraphRag"
#: Facade attributes that are not services to twin, with the reason.
LEFT_OUT_ATTRIBUTES = {"store": "its calls take async work functions"}
#: Facade methods that are not twinned by the generic rule (``for_tenant`` returns a facade, not
#: a result: the twin's own ``for_tenant`` is written in :func:`facade_twin`, on the same loop).
LEFT_OUT_FACADE_METHODS = frozenset({"sync", "for_tenant"})
#: Facade methods after which the loop is stopped (the facade is closed).
STOPPING_METHODS = frozenset({"close", "__aexit__"})
CONTEXT_METHODS = {"__aenter__": "__enter__", "__aexit__": "__exit__"}
#: These must be found, so a change in the facade's shape never silently drops one.
REQUIRED_SERVICES = ("ingestion", "retriever", "answers", "maintenance")
#: Why an attribute may be None, for the error its property raises.
NONE_REASONS = {
    "answers": "answers need a chat client (GraphRag(chat=...))",
    "graph": "graph questions are off until enabled (GraphRag(text2cypher=Text2CypherOptions()))",
}
ASYNC_ITERABLES = frozenset(
    {
        ("collections.abc", "AsyncIterator"),
        ("collections.abc", "AsyncGenerator"),
        ("collections.abc", "AsyncIterable"),
        ("typing", "AsyncIterator"),
        ("typing", "AsyncGenerator"),
        ("typing", "AsyncIterable"),
    }
)


class GenerationError(Exception):
    """The async code has a shape this script does not twin; the message says where and why."""


@dataclass(frozen=True)
class Binding:
    """How a module binds a name: ``from module import name`` (name set) or ``import module``."""

    module: str
    name: str | None

    def target(self) -> object:
        """What the binding stands for at run time (a module, or an attribute of one)."""
        module = importlib.import_module(self.module)
        return module if self.name is None else getattr(module, self.name)

    def statement(self, local: str) -> str:
        if self.name is None:
            top = self.module.split(".")[0]
            return f"import {self.module}" if local == top else f"import {self.module} as {local}"
        return f"from {self.module} import {self.name}" + ("" if local == self.name else f" as {local}")


#: Names the generated code uses itself, and whether it needs them at run time.
OWN_NAMES = {
    "TYPE_CHECKING": (Binding("typing", "TYPE_CHECKING"), True),
    "LoopThread": (Binding("graphrag_orm.sync._loop", "LoopThread"), True),
    "ConfigurationError": (Binding("graphrag_orm.errors", "ConfigurationError"), True),
    "ErrorCode": (Binding("graphrag_orm.codes", "ErrorCode"), True),
    "Iterator": (Binding("collections.abc", "Iterator"), False),
}


class ModuleNames:
    """The names a module's top level binds: its imports (TYPE_CHECKING ones too) and definitions."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        tree = ast.parse(inspect.getsource(module))
        self.bindings: dict[str, Binding] = {}
        self._collect(tree.body)

    def _collect(self, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ImportFrom):
                source = self._absolute(node)
                for alias in node.names:
                    self.bindings[alias.asname or alias.name] = Binding(source, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.bindings[alias.asname] = Binding(alias.name, None)
                    else:
                        top = alias.name.split(".")[0]
                        self.bindings[top] = Binding(top, None)
            elif isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                self.bindings.setdefault(node.name, Binding(self.module.__name__, node.name))
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.bindings.setdefault(target.id, Binding(self.module.__name__, target.id))
            elif isinstance(node, ast.If | ast.Try):
                self._collect(node.body)
                self._collect(node.orelse)

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        package = (self.module.__package__ or "").split(".")
        base = package[: len(package) - node.level + 1]
        return ".".join([*base, *([node.module] if node.module else [])])

    def resolve(self, name: str, where: str) -> Binding | None:
        """The binding of ``name`` (None for a builtin); a private or unknown name stops the script."""
        binding = self.bindings.get(name)
        if binding is None:
            if hasattr(builtins, name):
                return None
            raise GenerationError(f"{where}: cannot tell where {name!r} comes from in {self.module.__name__}")
        if name.startswith("_") or (binding.name or "").startswith("_"):
            raise GenerationError(f"{where}: uses the private name {name!r}; a twin cannot import it")
        return binding


def used_names(node: ast.AST, *, annotation: bool) -> list[str]:
    """The free names of an expression, in order (``a.b.C`` uses ``a``), each once.

    In an annotation, a string is a quoted annotation whose names are used too;
    elsewhere (a default value) it is only a string.
    """
    names: list[str] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id not in names:
            names.append(child.id)
        elif annotation and isinstance(child, ast.Constant) and isinstance(child.value, str):
            try:
                inner = ast.parse(child.value, mode="eval")
            except SyntaxError:
                continue
            names.extend(name for name in used_names(inner, annotation=True) if name not in names)
    return names


@dataclass
class Imports:
    """The generated module's imports: each local name bound once, at run time or for type checking only.

    ``reserved`` are the generated classes' names, which nothing imported may take.
    """

    reserved: frozenset[str]
    runtime: dict[str, Binding] = field(default_factory=dict)
    typing: dict[str, Binding] = field(default_factory=dict)

    def add(self, local: str, binding: Binding, *, runtime: bool, where: str) -> None:
        if local in self.reserved:
            raise GenerationError(f"{where}: {local!r} is the name of a generated class")
        known = self.runtime.get(local) or self.typing.get(local)
        if known is not None and known != binding:
            if known.target() is not binding.target():
                raise GenerationError(f"{where}: {local!r} is {binding}, but already stands for {known}")
            # One object imported from two places: the shorter path (the public face) wins.
            binding = min(known, binding, key=lambda b: (b.module.count("."), b.module))
        if runtime:
            self.typing.pop(local, None)
            self.runtime[local] = binding
        elif local not in self.runtime:
            self.typing[local] = binding

    def use(self, names: ModuleNames, node: ast.AST, *, runtime: bool, where: str) -> None:
        """Import every name ``node`` uses (at run time for a default value, else for type checking)."""
        for name in used_names(node, annotation=not runtime):
            binding = names.resolve(name, where)
            if binding is not None:
                self.add(name, binding, runtime=runtime, where=where)


@dataclass(frozen=True)
class Method:
    """One public method of an async class, as source."""

    owner: type
    name: str
    function: Any
    node: ast.FunctionDef | ast.AsyncFunctionDef

    @property
    def where(self) -> str:
        return f"{self.owner.__module__}.{self.owner.__qualname__}.{self.name}"


def public_methods(cls: type, *, dunders: frozenset[str] = frozenset()) -> list[Method]:
    """``cls``'s public methods (and the named dunders), the nearest definition of each, in source order."""
    seen: set[str] = set()
    methods: list[Method] = []
    for owner in cls.__mro__:
        if owner is object:
            continue
        for name, value in vars(owner).items():
            if name in seen or (name.startswith("_") and name not in dunders):
                continue
            seen.add(name)
            if isinstance(value, staticmethod | classmethod | property) or not inspect.isfunction(value):
                continue  # not a call on the service (values, helpers, properties)
            tree = ast.parse(textwrap.dedent(inspect.getsource(value)))
            node = tree.body[0]
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name != name:
                raise GenerationError(f"{owner.__qualname__}.{name}: not defined by a def of that name")
            method = Method(owner, name, value, node)
            if node.decorator_list:
                decorators = ", ".join(ast.unparse(d) for d in node.decorator_list)
                raise GenerationError(f"{method.where}: decorated ({decorators}); teach scripts/make_sync.py")
            methods.append(method)
    return methods


def forwarded_arguments(arguments: ast.arguments) -> str:
    """The arguments that pass a twin's parameters on unchanged (``self`` left out)."""
    positional = [*arguments.posonlyargs, *arguments.args][1:]
    parts = [argument.arg for argument in positional]
    if arguments.vararg is not None:
        parts.append(f"*{arguments.vararg.arg}")
    parts.extend(f"{argument.arg}={argument.arg}" for argument in arguments.kwonlyargs)
    if arguments.kwarg is not None:
        parts.append(f"**{arguments.kwarg.arg}")
    return "".join(f", {part}" for part in parts)


def iterated_type(annotation: ast.expr, names: ModuleNames, where: str) -> ast.expr | None:
    """``T`` when ``annotation`` is an async iterator, generator or iterable of ``T``, else None."""
    if not isinstance(annotation, ast.Subscript):
        return None
    base = annotation.value
    if isinstance(base, ast.Name):
        binding = names.resolve(base.id, where)
        origin = (binding.module, binding.name) if binding is not None else None
    elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
        binding = names.resolve(base.value.id, where)
        origin = (binding.module, base.attr) if binding is not None and binding.name is None else None
    else:
        origin = None
    if origin not in ASYNC_ITERABLES:
        return None
    element = annotation.slice
    return element.elts[0] if isinstance(element, ast.Tuple) else element


def docstring(text: str | None, footer: str) -> str:
    """A docstring literal, indented for a method body: the original text, then ``footer``."""
    body = f"{text.strip()}\n\n{footer}" if text else footer
    body = body.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    lines = body.split("\n")
    if len(lines) == 1:
        return f'"""{body}"""'
    rest = "\n".join(f"        {line}" if line else "" for line in lines[1:])
    return f'"""{lines[0]}\n{rest}\n        """'


def import_signature(
    node: ast.FunctionDef | ast.AsyncFunctionDef, names: ModuleNames, imports: Imports, where: str
) -> None:
    """Import what the parameters' annotations (for type checking) and defaults (at run time) use."""
    arguments = node.args
    for default in [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]:
        imports.use(names, default, runtime=True, where=where)
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    for argument in every:
        if argument is not None and argument.annotation is not None:
            imports.use(names, argument.annotation, runtime=False, where=where)


@dataclass
class Body:
    """A twin's return type, its one statement and the last line of its docstring."""

    returns: ast.expr
    statement: str
    footer: str


def blocking_body(method: Method, target: str, names: ModuleNames, imports: Imports) -> Body | None:
    """How the twin calls ``self.<target>.<name>``: run, iterate or forward; None for a plain method it skips."""
    node, where = method.node, method.where
    if node.returns is None:
        raise GenerationError(f"{where}: no return annotation")
    call = f"self.{target}.{method.name}{forwarded_arguments(node.args)}"
    qualified = f"{method.owner.__qualname__}.{method.name}"
    coroutine = inspect.iscoroutinefunction(method.function)
    element = None if coroutine else iterated_type(node.returns, names, where)
    if inspect.isasyncgenfunction(method.function) and element is None:
        raise GenerationError(f"{where}: an async generator must return AsyncIterator[T] or AsyncGenerator[T, ...]")
    if element is not None:
        imports.use(names, element, runtime=False, where=where)
        imports.add("Iterator", OWN_NAMES["Iterator"][0], runtime=False, where=where)
        return Body(
            ast.Subscript(value=ast.Name("Iterator"), slice=element),
            f"return self._runner.iterate({call})",
            f"Iterates ``{qualified}`` on the sync loop; closing the iterator closes it.",
        )
    if target == "_rag" and node.returns is not None and ast.unparse(node.returns) == FACADE_CLASS:
        # A facade method returning the facade (connect) returns its twin.
        return Body(
            ast.Name(TWIN_OF_FACADE),
            f"self._runner.run({call})\n        return self",
            f"Runs ``{qualified}`` on the sync loop and blocks until it ends.",
        )
    imports.use(names, node.returns, runtime=False, where=where)
    if coroutine:
        statement = f"return self._runner.run({call})"
        footer = f"Runs ``{qualified}`` on the sync loop and blocks until it ends."
    elif target == "_rag":
        return None
    else:
        statement = f"return {call.replace('(, ', '(')}"
        footer = f"``{qualified}``, forwarded (it does not wait on the loop)."
    if isinstance(node.returns, ast.Constant) and node.returns.value is None:
        statement = statement.removeprefix("return ")  # mypy: a call returning None is no value
    return Body(node.returns, statement, footer)


def twin_method(method: Method, target: str, names: ModuleNames, imports: Imports) -> str | None:
    """The blocking twin of ``method``, calling ``self.<target>`` (``_rag`` for the facade's own methods)."""
    body = blocking_body(method, target, names, imports)
    if body is None:
        return None
    import_signature(method.node, names, imports, method.where)
    name = method.name
    if target == "_rag":
        name = CONTEXT_METHODS.get(name, name)
        if method.name == "__aenter__":
            body.footer = "Connects, unless connected, as ``async with`` does."
        if method.name in STOPPING_METHODS:
            if not (isinstance(body.returns, ast.Constant) and body.returns.value is None):
                raise GenerationError(f"{method.where}: a method that closes the facade must return None")
            body.statement = (
                f"try:\n            {body.statement}\n        finally:\n"
                f"            if self._owns_loop:\n                self._runner.stop()"
            )
            body.footer += (
                " Then stops the loop (a tenant's view leaves it to the twin it came from):"
                " later calls raise ``RuntimeError``."
            )
    return (
        f"    def {name}({ast.unparse(method.node.args)}) -> {ast.unparse(body.returns)}:\n"
        f"        {docstring(ast.get_docstring(method.node), body.footer)}\n"
        f"        {body.statement}\n"
    )


@dataclass(frozen=True)
class Service:
    """A facade attribute to twin: its name, its class and whether it may be None."""

    attribute: str
    cls: type
    optional: bool

    @property
    def twin(self) -> str:
        return f"Sync{self.cls.__name__}"


def _class_name(node: ast.expr) -> tuple[str | None, bool]:
    """The class an attribute is annotated with or built from, and whether it may be None."""
    if isinstance(node, ast.Name):
        return node.id, False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id, False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = node.left, node.right
        if isinstance(right, ast.Constant) and right.value is None:
            return _class_name(left)[0], True
        if isinstance(left, ast.Constant) and left.value is None:
            return _class_name(right)[0], True
    if isinstance(node, ast.IfExp):
        for branch, other in ((node.body, node.orelse), (node.orelse, node.body)):
            if isinstance(other, ast.Constant) and other.value is None:
                return _class_name(branch)[0], True
    return None, False


def facade_services(facade: type, module: ModuleType) -> list[Service]:
    """The services ``GraphRag.__init__`` builds, in the order it builds them."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(vars(facade)["__init__"])))
    found: dict[str, Service] = {}
    for node in ast.walk(tree):
        targets: list[ast.expr]
        if isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.annotation
        elif isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        else:
            continue
        for target in targets:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                continue
            attribute = target.attr
            if target.value.id != "self" or attribute.startswith("_") or attribute in found:
                continue
            if attribute in LEFT_OUT_ATTRIBUTES:
                continue
            name, optional = _class_name(value)
            cls = getattr(module, name, None) if name else None
            if not inspect.isclass(cls) or not cls.__module__.startswith("graphrag_orm."):
                continue
            if any(
                inspect.iscoroutinefunction(m.function) or inspect.isasyncgenfunction(m.function)
                for m in public_methods(cls)
            ):
                found[attribute] = Service(attribute, cls, optional)
    missing = [name for name in REQUIRED_SERVICES if name not in found]
    if missing:
        raise GenerationError(f"{FACADE_CLASS}.__init__: no service found for {', '.join(missing)}")
    return list(found.values())


HEADER = '''\
# Generated by scripts/make_sync.py from the async services: do not edit. Run `make sync`.
"""Typed blocking twins of ``GraphRag`` and its services; see :mod:`graphrag_orm.sync`.

Twinned:

{services}
"""

from __future__ import annotations

'''


def service_twin(service: Service, imports: Imports) -> str:
    cls = service.cls
    names = ModuleNames(importlib.import_module(cls.__module__))
    imports.add(cls.__name__, Binding(cls.__module__, cls.__name__), runtime=False, where=cls.__qualname__)
    methods = [twin_method(m, "_service", names, imports) for m in public_methods(cls)]
    body = "\n".join(m for m in methods if m is not None)
    return (
        f"class {service.twin}:\n"
        f'    """``{cls.__name__}`` with blocking calls, on the sync loop of the ``{TWIN_OF_FACADE}`` it came from."""\n\n'
        f"    def __init__(self, service: {cls.__name__}, runner: LoopThread) -> None:\n"
        f"        self._service = service\n"
        f"        self._runner = runner\n\n"
        f"{body}"
    )


def facade_property(service: Service) -> str:
    head = f"    @property\n    def {service.attribute}(self) -> {service.twin}:\n"
    if not service.optional:
        return (
            f"{head}"
            f'        """``{FACADE_CLASS}.{service.attribute}``, blocking."""\n'
            f"        return {service.twin}(self._rag.{service.attribute}, self._runner)\n"
        )
    reason = NONE_REASONS.get(service.attribute, f"this {FACADE_CLASS} was built without it")
    return (
        f"{head}"
        f'        """``{FACADE_CLASS}.{service.attribute}``, blocking; ``ConfigurationError`` when it is None."""\n'
        f"        service = self._rag.{service.attribute}\n"
        f"        if service is None:\n"
        f"            raise ConfigurationError(\n"
        f'                ErrorCode.INVALID_OPTION, "{FACADE_CLASS}.{service.attribute} is None: {reason}"\n'
        f"            )\n"
        f"        return {service.twin}(service, self._runner)\n"
    )


def facade_twin(facade: type, module: ModuleType, services: list[Service], imports: Imports) -> str:
    names = ModuleNames(module)
    imports.add(FACADE_CLASS, Binding(module.__name__, FACADE_CLASS), runtime=False, where=FACADE_CLASS)
    properties = "\n".join(facade_property(service) for service in services)
    methods = [
        twin_method(m, "_rag", names, imports)
        for m in public_methods(facade, dunders=frozenset(CONTEXT_METHODS))
        if m.name not in LEFT_OUT_FACADE_METHODS
    ]
    body = "\n".join(m for m in methods if m is not None)
    if any(service.optional for service in services):
        for own in ("ConfigurationError", "ErrorCode"):
            imports.add(own, OWN_NAMES[own][0], runtime=True, where=FACADE_CLASS)
    imports.add("Tenant", Binding("graphrag_orm.tenancy", "Tenant"), runtime=False, where=FACADE_CLASS)
    return (
        f"class {TWIN_OF_FACADE}:\n"
        f'    """``{FACADE_CLASS}`` with blocking calls: one private event loop in a daemon thread runs them all.\n\n'
        f"    ``{FACADE_CLASS}.sync()`` returns the same twin until it is closed. ``close()`` (or leaving\n"
        f"    ``with``) closes the facade and stops the loop.\n"
        f'    """\n\n'
        f"    def __init__(self, rag: {FACADE_CLASS}, runner: LoopThread | None = None) -> None:\n"
        f"        self._rag = rag\n"
        f"        self._runner = runner or LoopThread()\n"
        f"        #: A tenant's view runs on the loop of the twin it came from, and leaves it running.\n"
        f"        self._owns_loop = runner is None\n\n"
        f"    @property\n"
        f"    def rag(self) -> {FACADE_CLASS}:\n"
        f'        """The async facade these calls run on (its values, such as ``options``, are shared)."""\n'
        f"        return self._rag\n\n"
        f"    @property\n"
        f"    def closed(self) -> bool:\n"
        f'        """True once ``close()`` has stopped the loop."""\n'
        f"        return self._runner.stopped\n\n"
        f"    def for_tenant(self, tenant: Tenant | str) -> {TWIN_OF_FACADE}:\n"
        f'        """``{FACADE_CLASS}.for_tenant``: a twin of the view on this twin\'s loop; closing it leaves the\n'
        f'        loop and the driver to this twin."""\n'
        f"        return {TWIN_OF_FACADE}(self._rag.for_tenant(tenant), self._runner)\n\n"
        f"{properties}\n"
        f"{body}"
    )


def render_imports(imports: Imports) -> str:
    def lines(table: dict[str, Binding], indent: str) -> list[str]:
        return sorted(f"{indent}{binding.statement(local)}" for local, binding in table.items())

    runtime = dict(imports.runtime)
    if imports.typing:
        runtime["TYPE_CHECKING"] = OWN_NAMES["TYPE_CHECKING"][0]
    text = "\n".join(lines(runtime, ""))
    if imports.typing:
        text += "\n\nif TYPE_CHECKING:\n" + "\n".join(lines(imports.typing, "    "))
    return text + "\n"


def generate() -> str:
    """The generated module's text, formatted."""
    module = importlib.import_module(FACADE_MODULE)
    facade = getattr(module, FACADE_CLASS)
    services = facade_services(facade, module)
    imports = Imports(reserved=frozenset([*(service.twin for service in services), TWIN_OF_FACADE]))
    imports.add("LoopThread", OWN_NAMES["LoopThread"][0], runtime=True, where="module")
    classes = [service_twin(service, imports) for service in services]
    classes.append(facade_twin(facade, module, services, imports))
    exported = sorted([*(service.twin for service in services), TWIN_OF_FACADE])
    twinned = "\n".join(
        f"- ``GraphRag.{service.attribute}``: ``{service.cls.__qualname__}`` as ``{service.twin}``"
        for service in services
    )
    text = (
        HEADER.format(services=twinned)
        + render_imports(imports)
        + f"\n__all__ = [{', '.join(repr(name) for name in exported)}]\n\n\n"
        + "\n\n".join(classes)
    )
    return _ruff(text)


def _ruff(text: str) -> str:
    """``text`` with imports sorted and formatted by the project's ruff settings."""
    ruff = Path(sys.executable).with_name("ruff")
    command = [str(ruff) if ruff.exists() else "ruff"]
    name = str(TARGET.relative_to(ROOT))
    for step in (
        ["check", "--select", "I", "--fix", "--exit-zero", "--quiet", "--stdin-filename", name, "-"],
        ["format", "--quiet", "--stdin-filename", name, "-"],
    ):
        done = subprocess.run([*command, *step], input=text, capture_output=True, text=True, cwd=ROOT, check=False)
        if done.returncode != 0:
            raise GenerationError(f"ruff {step[0]} failed on the generated module: {done.stderr.strip()}")
        text = done.stdout
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 when the checked-in module is stale")
    arguments = parser.parse_args(argv)
    try:
        text = generate()
    except GenerationError as error:
        print(f"make_sync: {error}", file=sys.stderr)
        return 2
    current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else None
    where = TARGET.relative_to(ROOT)
    if arguments.check:
        if current != text:
            print(f"make_sync: {where} is stale; run `make sync` and commit it", file=sys.stderr)
            return 1
        return 0
    if current != text:
        TARGET.write_text(text, encoding="utf-8")
        print(f"make_sync: wrote {where}")
    else:
        print(f"make_sync: {where} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
