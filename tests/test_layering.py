"""The package's import graph has no circle (issue 15).

Every import counts, wherever it stands: module level, inside a function, under
``if TYPE_CHECKING:``. A deferred import still couples two modules, and a circle hides
until the day someone moves one of its imports to the top. The one kind of edge left out:
a package ``__init__`` importing its own submodules (it re-exports them; the submodules
importing the package's other parts is the normal direction).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ctxmode"

# Edges known to close a circle, each to be untied (not to be added to).
ALLOWED: set[tuple[str, str]] = set()  # no circle is tolerated


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts
    }


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The ctxmode module ``name`` stands for: itself, else its nearest known parent."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph() -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                # `from pkg import sub` imports the submodule when there is one.
                subs = [f"{base}.{alias.name}" for alias in node.names]
                targets = [base, *(sub for sub in subs if sub in known)]
            for target in targets:
                module = _resolve(target, known)
                if module is None or module == name or (name, module) in ALLOWED:
                    continue
                if is_package and module.startswith(name + "."):
                    continue  # a package re-exporting its own submodules
                graph[name].add(module)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of the graph (its modules, the first repeated at the end), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return []


def test_the_import_graph_has_no_circle() -> None:
    cycle = find_cycle(import_graph())
    assert not cycle, "import circle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_circle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_deferred_and_type_checking_imports() -> None:
    graph = import_graph()
    assert "ctxmode.handlers" in graph["ctxmode.hookrun"]  # imported inside run_hook
    assert "ctxmode.context" in graph["ctxmode.hookrun"]


# -- the host seam: the core never names a client -------------------------------------------

# The core: what every client's data goes through. It speaks ctxmode's neutral vocabulary and
# reaches a client only through the registry (``hosts.get``), never by name.
NEUTRAL = [
    "extract",
    "store",
    "snapshot",
    "events.py",
    "payload.py",
    "handlers.py",
    "hookrun.py",
    "context.py",
    "outcomes.py",
    "inflight.py",
    "spool.py",
    "resume_cache.py",
    "worktree.py",
    "importer.py",
]
# Words of one client's output format (the hosts share them through hosts.additional_context).
CLIENT_WORDS = ("hookSpecificOutput", "additionalContext")
# Not yet neutral, each to be untied (not added to): Claude Code's instruction files, which
# the file extractor counts as rules whichever client touched them, and the home folder
# read from a Claude Code transcript path (docs/architecture.md, "Hosts").
NOT_YET_NEUTRAL = {
    ("extract/common.py", ".claude"),
    ("extract/common.py", "CLAUDE.md"),
    ("extract/common.py", "CLAUDE.local.md"),
    ("extract/bash.py", "/.claude/projects/"),
}


def _neutral_files() -> list[Path]:
    files: list[Path] = []
    for name in NEUTRAL:
        path = PACKAGE / name
        files.extend(sorted(path.glob("*.py")) if path.is_dir() else [path])
    return files


def _client_names() -> set[str]:
    """Every registered host's names: its package, its command-line name, its label."""
    from ctxmode import hosts

    names: set[str] = set()
    for name in hosts.NAMES:
        host = hosts.get(name)
        names |= {name, host.OPTION, host.LABEL, host.LABEL.removesuffix(" CLI")}
    return {n.lower() for n in names}


def _code_strings_and_names(path: Path) -> set[str]:
    """String constants (docstrings left out) and identifiers of ``path``'s code."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                found.add(node.value)
        elif isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.name)
    return found


def test_the_core_names_no_client_and_no_client_tool() -> None:
    from ctxmode.hosts import claude_code

    clients = _client_names()
    assert {"claude", "claude_code", "codex", "gemini"} <= clients  # the check sees them
    # Its own tools: apply_patch is also the name of ctxmode's patch extractor (and Codex's tool).
    tool_names = {tool for tool, kind in claude_code.TOOL_KINDS.items() if kind != "file.patch"}
    for path in _neutral_files():
        words = _code_strings_and_names(path)
        where = str(path.relative_to(PACKAGE))
        named = sorted(
            w
            for w in words
            if (any(c in w for c in CLIENT_WORDS) or any(c in w.lower() for c in clients))
            and (where, w) not in NOT_YET_NEUTRAL
        )
        assert not named, f"{where} names a client: {named}"
        tools = sorted(words & tool_names)
        assert not tools, f"{path.relative_to(PACKAGE)} names a client's tools: {tools}"
        modules = {
            node.module or ""
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom)
        }
        assert not {m for m in modules if m.startswith("ctxmode.hosts.")}, path


def test_the_core_check_catches_a_client_name(tmp_path: Path) -> None:
    """The check above fails on a core module that names a client in its code."""
    clients = _client_names()
    for line in ('KIND = "gemini"\n', "from ctxmode.hosts import codex\n", "x = Claude_thing\n"):
        module = tmp_path / "m.py"
        module.write_text(line)
        words = _code_strings_and_names(module)
        assert any(c in w.lower() for w in words for c in clients), line


def test_the_extractors_dispatch_on_kinds_every_host_maps_to() -> None:
    from ctxmode import hosts
    from ctxmode.extract import KINDS

    assert set(KINDS) <= set(hosts.KINDS)
    for name in hosts.NAMES:
        host = hosts.get(name)
        assert {host.tool_kind(tool) for tool in host.TOOL_KINDS} <= set(hosts.KINDS)


def test_the_host_modules_stay_light() -> None:
    heavy = {"json", "re", "typing", "dataclasses", "pathlib", "importlib", "sqlite3", "hashlib"}
    hook_path = [
        PACKAGE / "hosts" / "__init__.py",
        *sorted((PACKAGE / "hosts").glob("*/__init__.py")),
    ]
    assert len(hook_path) > 3  # the registry and each host's package
    for path in [*hook_path, PACKAGE / "context.py"]:
        top: set[str] = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                top.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                top.add(node.module.split(".")[0])
        assert not top & heavy, f"{path.name} imports {sorted(top & heavy)} at module level"
