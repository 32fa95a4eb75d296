"""The Python package's layers, checked from its source with `ast` (nothing is imported).

The layers, bottom to top; a module may import from the layers below its own and from its own
layer, as long as no import loop forms:

    engine → analysis → plots → experiments → web → cli

- `buflab.engine`: the one door to the compiled engine `buflab._core` (the package's
  `__init__`), units, scenarios and overrides, the event log, `Result` with its table
  columns, and `run` / `validate`. Only the door imports `buflab._core`.
- `buflab.analysis`: theory, statistics, transfers, the queue rebuilt from the event log.
- `buflab.plots`: the shared figure helpers, and the figures of analyses.
- `buflab.experiments`: sweeps, size searches, the auto-sizer, load, recipes and reports.
- `buflab.web`: `buflab serve`, the live control panel: its server and page.
- `buflab.cli`: the command line and its terminal output.

The package itself (`buflab`, whose attributes load lazily) and `buflab.api` are the Python
API, on top beside the command line; nothing inside the package imports them, except
`__version__` from the package, which it defines before anything else.

An import inside a function is allowed only to spare start-up time (pandas, pyarrow and
matplotlib take about a second to import, and `buflab --help`, `buflab theory` and sweep
workers must not pay it), and says so in a comment containing "start-up time": on its own
line, or heading the block of imports it belongs to. An import inside a function to break
an import loop would be caught anyway, since the loop check counts those imports too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "buflab"
LAYERS = ("engine", "analysis", "plots", "experiments", "web", "cli")
FACADE = ("buflab", "buflab.api")  # the Python API: above every layer
CORE = "buflab._core"
CORE_DOOR = "buflab.engine"
STARTUP_MARKER = "start-up time"
HEAVY = ("pandas", "pyarrow", "matplotlib")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def rank(module: str) -> int:
    """The layer's place from the bottom: the engine 0, the facade above the command line."""
    if module in FACADE:
        return len(LAYERS)
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in LAYERS:
        raise AssertionError(f"{module} belongs to no layer: put it in one of {LAYERS}")
    return LAYERS.index(parts[1])


@dataclass(frozen=True)
class Import:
    importer: str
    target: str  # the module imported, or `buflab` for a name of the package itself
    name: str | None  # for `from buflab import NAME`
    line: int
    end_line: int
    in_function: bool
    type_checking: bool


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(importer: str, node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str | None]]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name, None
        return
    assert node.level == 0, f"{importer}:{node.lineno}: write the import out, buflab.…"
    base = node.module or ""
    for alias in node.names:
        candidate = f"{base}.{alias.name}"
        if candidate in MODULES or candidate == CORE:
            yield candidate, None
        else:
            yield base, alias.name


def imports_of(module: str) -> list[Import]:
    """Every import of a buflab module in `module`: at the top, under TYPE_CHECKING or
    inside a function."""
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool, type_checking: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target, name in _targets(module, node):
                if target == "buflab" or target.startswith("buflab."):
                    end = node.end_lineno or node.lineno
                    found.append(
                        Import(module, target, name, node.lineno, end, in_function, type_checking)
                    )
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, in_function, True)
            for child in node.orelse:
                visit(child, in_function, type_checking)
            return
        inside = in_function or isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
        )
        for child in ast.iter_child_nodes(node):
            visit(child, inside, type_checking)

    visit(tree, False, False)
    return found


ALL_IMPORTS = [imp for module in MODULES for imp in imports_of(module)]


def test_every_module_has_a_layer_and_a_read_first_header() -> None:
    for module, path in MODULES.items():
        rank(module)
        docstring = ast.get_docstring(ast.parse(path.read_text()))
        assert docstring and len(docstring.split()) >= 12, (
            f"{path}: begins with a docstring saying what it owns and what it must not know"
        )


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    upward = [
        f"{imp.importer}:{imp.line} imports {imp.target} ({_layer_name(imp.target)} is above "
        f"{_layer_name(imp.importer)})"
        for imp in ALL_IMPORTS
        if imp.target not in (CORE, "buflab") and rank(imp.target) > rank(imp.importer)
    ]
    assert not upward, "\n".join(upward)


def _layer_name(module: str) -> str:
    return "the Python API" if module in FACADE else f"layer {LAYERS[rank(module)]}"


def test_the_package_itself_is_imported_for_its_version_only() -> None:
    wrong = [
        f"{imp.importer}:{imp.line} imports {imp.name!r} from buflab; import it from its module"
        for imp in ALL_IMPORTS
        if imp.target == "buflab" and imp.importer not in FACADE and imp.name != "__version__"
    ]
    assert not wrong, "\n".join(wrong)


def test_only_the_engine_door_imports_the_compiled_engine() -> None:
    doors = {imp.importer for imp in ALL_IMPORTS if imp.target == CORE}
    assert doors == {CORE_DOOR}


def _ancestors(module: str) -> list[str]:
    """The packages Python initialises before `module`, the package `buflab` left out (it
    imports nothing at run time: its attributes load on first use)."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def import_graph() -> dict[str, set[str]]:
    """Who imports whom when the code runs: every import outside TYPE_CHECKING, those inside
    functions included, and the packages that importing a module initialises on the way (but
    not the importer's own packages, which are initialised already)."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for imp in ALL_IMPORTS:
        if imp.type_checking or imp.target in (CORE, "buflab"):
            continue
        own = set(_ancestors(imp.importer))
        for target in [*_ancestors(imp.target), imp.target]:
            if target not in own and target != imp.importer:
                graph[imp.importer].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                connect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_no_import_loops() -> None:
    loops = _cycles(import_graph())
    assert not loops, "import loops: " + "; ".join(" ↔ ".join(loop) for loop in loops)


def test_the_loop_check_sees_a_loop() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _says_startup(lines: list[str], imp: Import, import_lines: set[int]) -> bool:
    if any(
        STARTUP_MARKER in lines[n - 1] for n in range(imp.line, max(imp.line, imp.end_line) + 1)
    ):
        return True
    n = imp.line - 1
    while n > 0 and (n in import_lines or not lines[n - 1].strip()):
        n -= 1
    return n > 0 and lines[n - 1].strip().startswith("#") and STARTUP_MARKER in lines[n - 1]


def test_imports_inside_functions_say_they_spare_start_up_time() -> None:
    unexplained = []
    for module, path in MODULES.items():
        lines = path.read_text().splitlines()
        tree = ast.parse(path.read_text())
        import_lines = {
            n
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)
        }
        for imp in _function_imports(module, tree):
            if not _says_startup(lines, imp, import_lines):
                unexplained.append(f"{path.relative_to(PACKAGE.parent)}:{imp.line}")
    assert not unexplained, (
        f"imports inside functions without a '# {STARTUP_MARKER}: ...' comment: "
        + ", ".join(unexplained)
    )


def _function_imports(module: str, tree: ast.Module) -> list[Import]:
    """Every import inside a function, of any module (buflab's or not)."""
    found = {
        inner.lineno: Import(module, "", None, inner.lineno, inner.end_lineno or 0, True, False)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for inner in ast.walk(node)
        if isinstance(inner, ast.Import | ast.ImportFrom)
    }
    return [found[line] for line in sorted(found)]


def test_the_package_docstring_states_the_layer_order() -> None:
    docstring = ast.get_docstring(ast.parse(MODULES["buflab"].read_text())) or ""
    assert " → ".join(LAYERS) in docstring


@pytest.mark.parametrize(
    "statement",
    [
        "import buflab",
        "import buflab.cli",
        "import buflab.experiments._worker",
        "import buflab; buflab.theory",
        # `buflab theory FILE`: the link's facts are the engine's, read without the runner.
        "from buflab.cli.theory import theory_command; "
        f"theory_command.main([{str(PACKAGE.parent.parent / 'examples' / 'dumbbell.toml')!r}], "
        "standalone_mode=False)",
    ],
)
def test_cheap_starts_import_no_heavy_library(statement: str) -> None:
    """`buflab --help`, `buflab theory` (with a FILE too), sweep workers and `import buflab`
    import neither pandas, pyarrow nor matplotlib."""
    probe = f"{statement}; import sys; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    loaded = loaded.strip().splitlines()[-1]  # after what the statement prints
    assert loaded == "[]", f"{statement}: imports {loaded}"


def test_the_public_api_is_where_it_was() -> None:
    import buflab
    import buflab.api

    for name in buflab.__all__:
        assert getattr(buflab, name) is not None, name
    for name in ("run", "validate", "load_scenario", "size", "size_curve", "size_curves"):
        assert getattr(buflab.api, name) is getattr(buflab, name), name
    assert buflab.api.Result is buflab.Result
    assert buflab.api.ScenarioError is buflab.ScenarioError
    assert buflab.theory.__name__ == "buflab.analysis.theory"
    assert buflab.load.__name__ == "buflab.experiments.load"
    assert buflab.autosize.__name__ == "buflab.experiments.autosize"
