"""The hook path stays lean and the layering stays clean (checked without timing)."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pytest

from tests.hooktools import SHIMS, hook_command, hook_env

PACKAGE = Path(__file__).resolve().parents[1] / "ctxmode"

# Modules a hook process may load; their module-level imports are checked below.
HOT_PATH = [
    "hookrun",
    "handlers",
    "payload",
    "paths",
    "store",
    "migrations",
    "events",
    "fastjson",
    "hashing",
    "redact",
    "snapshot",
    "config",
    "hooklog",
    "spool",
    "writable",  # the status line's, when the data root is not made yet
    "secret_memory",
]
# Banned at module level on the hot path (each costs milliseconds per hook call).
HEAVY = {
    "json",
    "sqlite3",
    "hashlib",
    "typing",
    "dataclasses",
    "enum",
    "logging",
    "datetime",
    "pathlib",
    "shlex",
    "tomllib",
    "click",
    "orjson",
    "platformdirs",
    "importlib",
    "re",
    "subprocess",
    "xml",
}
# Never imported by a hook process at all, on any branch.
NEVER = {"click", "orjson", "platformdirs", "importlib.metadata"}
# The store's parts a hook does not use: Store loads them on first use (store/__init__.py).
STORE_COLD = {"ctxmode.store.search", "ctxmode.store.maintenance"}
PURE = ["events", "fastjson", "snapshot", "redact"]


def _module_files(name: str) -> list[Path]:
    if (PACKAGE / name).is_dir():  # a package (extract, snapshot, store): every module in it
        return sorted((PACKAGE / name).glob("*.py"))
    path = PACKAGE / f"{name}.py"
    return [path] if path.exists() else []


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in tree.body:  # module level only; function-level imports are deferred on purpose
        nodes = [node]
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` blocks never run
            test = node.test
            if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                continue
        if isinstance(node, ast.Try):
            nodes = [*node.body, *(h for handler in node.handlers for h in handler.body)]
        for item in nodes:
            if isinstance(item, ast.Import):
                names.update(alias.name.split(".")[0] for alias in item.names)
            elif isinstance(item, ast.ImportFrom) and item.module and not item.level:
                names.add(item.module.split(".")[0])
    return names


@pytest.mark.parametrize("module", [*HOT_PATH, "extract"])
def test_hot_path_modules_import_nothing_heavy(module: str) -> None:
    for path in _module_files(module):
        heavy = _top_level_imports(path) & HEAVY
        assert not heavy, f"{path.name} imports {sorted(heavy)} at module level"


def _all_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", [*PURE, "extract"])
def test_pure_modules_do_no_io(module: str) -> None:
    for path in _module_files(module):
        imports = _all_imports(path)
        assert not {
            n
            for n in imports
            if n.split(".")[0] in {"sqlite3", "_sqlite3", "os", "subprocess", "socket", "time"}
        }
        calls = {
            node.func.id
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        assert not calls & {"open", "print", "input", "exec", "eval"}, path.name


def test_store_knows_nothing_of_extractors_or_snapshot() -> None:
    files = [*_module_files("store"), PACKAGE / "migrations.py"]
    imports = set().union(*(_all_imports(path) for path in files))
    assert not {n for n in imports if n.startswith(("ctxmode.extract", "ctxmode.snapshot"))}


def test_only_the_cli_imports_click() -> None:
    for path in PACKAGE.rglob("*.py"):
        if "cli" in path.relative_to(PACKAGE).parts or path.name == "__main__.py":
            continue
        assert "click" not in {n.split(".")[0] for n in _all_imports(path)}, path


def test_shims_import_only_hookrun() -> None:
    for folder in (PACKAGE / "hooks", PACKAGE.parent / "hooks"):
        for name in SHIMS.values():
            imports = _all_imports(folder / name)
            # ctxmode.early_stop: the captures' first import (a stop while they start is kept)
            assert imports <= {"os", "sys", "ctxmode.hookrun", "ctxmode.early_stop"}, (
                folder,
                imports,
            )


@pytest.mark.parametrize("event", sorted(SHIMS))
def test_hook_processes_never_load_heavy_modules(event: str, tmp_path: Path) -> None:
    """-X importtime of a real hook run: click, orjson, platformdirs, importlib.metadata absent."""
    payload = {
        "session_id": "imp",
        "cwd": str(tmp_path),
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": "git commit -m 'x'"},
        "tool_response": {"stdout": "", "stderr": ""},
        "prompt": "fix the bug",
        "source": "compact",
        "reason": "other",
    }
    command = hook_command(event)
    command.insert(1, "-X")
    command.insert(2, "importtime")
    result = subprocess.run(
        command,
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=hook_env(CTXMODE_HOME=str(tmp_path / "home")),
        timeout=30,
    )
    assert result.returncode == 0
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert loaded, "no -X importtime output"
    assert not loaded & NEVER, sorted(loaded & NEVER)
    assert not loaded & STORE_COLD, sorted(loaded & STORE_COLD)
    assert "json" not in loaded and "sqlite3" not in loaded and "typing" not in loaded


# Every ctxmode module a capture hook loads (PostToolUse of an Edit, on an existing store, in
# a session with no open error): the hook's most frequent run. Each module costs a hook
# ~0.1 ms (~0.4 M instructions) to find and load, so the list is exact: a new module on
# this path is a decision (load it on first use instead, or add it here saying why).
CAPTURE_PATH = {
    "ctxmode",
    "ctxmode.config",  # the user's exclude_paths, redact_patterns, caps
    "ctxmode.context",  # what the runner hands the handlers
    "ctxmode.early_stop",  # the shim's first import: the client's stop kept from the start
    "ctxmode.events",
    "ctxmode.extract",
    "ctxmode.extract.common",
    "ctxmode.extract.files",  # the Edit's extractor
    "ctxmode.fastjson",
    "ctxmode.handlers",
    "ctxmode.hashing",
    "ctxmode.hookrun",
    "ctxmode.hosts",  # the host seam: the client's payload and output
    "ctxmode.hosts.claude_code",
    "ctxmode.migrations",  # the schema version check on open
    "ctxmode.paths",
    "ctxmode.payload",
    "ctxmode.redact",  # mask before anything is stored
    "ctxmode.store",
    "ctxmode.store.connection",
    "ctxmode.store.events",
    "ctxmode.store.resumes",
    "ctxmode.store.sessions",
    "ctxmode.store.values",
}


def test_a_capture_hook_loads_exactly_its_modules(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    edit = {
        "session_id": "cap",
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": f"{project}/a.py", "old_string": "a", "new_string": "b"},
        "tool_response": {"filePath": f"{project}/a.py", "structuredPatch": []},
        "tool_use_id": "toolu_1",
    }
    env = hook_env(CTXMODE_HOME=str(tmp_path / "home"), CLAUDE_PROJECT_DIR=str(project))
    first = subprocess.run(
        hook_command("PostToolUse"), input=json.dumps(edit).encode(), env=env, timeout=30
    )
    assert first.returncode == 0  # the store exists now: the next run is the usual one
    command = hook_command("PostToolUse")
    command[1:1] = ["-X", "importtime"]
    edit["tool_use_id"] = "toolu_2"
    edit["tool_input"]["new_string"] = "c"
    result = subprocess.run(
        command, input=json.dumps(edit).encode(), capture_output=True, env=env, timeout=30
    )
    assert (result.returncode, result.stdout) == (0, b"")
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    ours = {name for name in loaded if name == "ctxmode" or name.startswith("ctxmode.")}
    assert ours == CAPTURE_PATH, (
        f"loaded, not listed: {sorted(ours - CAPTURE_PATH)}; "
        f"listed, not loaded: {sorted(CAPTURE_PATH - ours)}"
    )


def test_a_project_that_remembers_a_secret_loads_one_module_more(tmp_path: Path) -> None:
    """A capture in a project whose sessions masked a secret before loads its memory
    (ctxmode.secret_memory): that one module beyond CAPTURE_PATH, nothing else."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    env = hook_env(CTXMODE_HOME=str(tmp_path / "home"), CLAUDE_PROJECT_DIR=str(project))
    prompt = {
        "session_id": "cap",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "the staging password is Qm7#vLx2p9, keep it handy",
    }
    first = subprocess.run(
        hook_command("UserPromptSubmit"), input=json.dumps(prompt).encode(), env=env, timeout=30
    )
    assert first.returncode == 0
    assert list((tmp_path / "home" / "masked").glob("*.bin"))
    edit = {
        "session_id": "cap",
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": f"{project}/a.py", "old_string": "a", "new_string": "b"},
        "tool_response": {"filePath": f"{project}/a.py", "structuredPatch": []},
        "tool_use_id": "toolu_2",
    }
    command = hook_command("PostToolUse")
    command[1:1] = ["-X", "importtime"]
    result = subprocess.run(
        command, input=json.dumps(edit).encode(), capture_output=True, env=env, timeout=30
    )
    assert (result.returncode, result.stdout) == (0, b"")
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    ours = {name for name in loaded if name == "ctxmode" or name.startswith("ctxmode.")}
    assert ours == CAPTURE_PATH | {"ctxmode.secret_memory"}, sorted(ours ^ CAPTURE_PATH)
