"""Every member declares what it imports, and carries what a published wheel should.

uv's workspace installs every member together, so a member that imports a library it
does not declare works here and breaks for someone who installs it alone with pip (the
server once imported httpx that way). This reads each member's imports from its source
and checks them against its `dependencies`.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MEMBERS = sorted(
    path.parent
    for folder in ("packages", "plugins", "apps")
    for path in ROOT.glob(f"{folder}/*/pyproject.toml")
)


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(member: Path) -> set[str]:
    project = tomllib.loads((member / "pyproject.toml").read_text())["project"]
    names = set()
    for requirement in project.get("dependencies", []):
        names.add(_normalise(re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]))
    return names


def optional(member: Path) -> set[str]:
    project = tomllib.loads((member / "pyproject.toml").read_text())["project"]
    names = set()
    for requirements in project.get("optional-dependencies", {}).values():
        for requirement in requirements:
            names.add(_normalise(re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]))
    return names


def _guarded(tree: ast.AST) -> set[int]:
    """Line numbers of imports inside ``try: ... except ImportError`` (optional ones)."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            isinstance(handler.type, ast.Name)
            and handler.type.id in ("ImportError", "ModuleNotFoundError")
            for handler in node.handlers
        ):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        lines.add(sub.lineno)
    return lines


def imported_modules(member: Path) -> dict[str, str]:
    """Top-level modules the member's source imports (outside TYPE_CHECKING), with a file."""
    found: dict[str, str] = {}
    for path in sorted((member / "src").rglob("*.py*")):
        if path.suffix not in (".py", ".pyi"):
            continue
        tree = ast.parse(path.read_text(), str(path))
        skip = _guarded(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        skip.add(sub.lineno)
        for node in ast.walk(tree):
            if node.__dict__.get("lineno") in skip:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
                if node.module == "viewfinder":
                    names = [f"viewfinder.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                top = ".".join(parts[:2]) if parts[0] == "viewfinder" else parts[0]
                found.setdefault(top, str(path.relative_to(ROOT)))
    return found


@functools.cache
def _providers() -> dict[str, list[str]]:
    return dict(metadata.packages_distributions())


def distribution_of(module: str, own: str) -> str | None:
    """The distribution that provides ``module`` (None for the standard library)."""
    if module.startswith("viewfinder."):
        return f"viewfinder-{module.split('.')[1]}"
    if module in sys.stdlib_module_names or module == "__future__":
        return None
    providers = _providers().get(module)
    if not providers:
        pytest.fail(f"{own} imports {module!r}, which no installed distribution provides")
    return _normalise(providers[0])


@pytest.mark.parametrize("member", MEMBERS, ids=[member.name for member in MEMBERS])
def test_a_member_declares_every_library_it_imports(member: Path) -> None:
    project = tomllib.loads((member / "pyproject.toml").read_text())["project"]
    own = _normalise(project["name"])
    needs = declared(member) | optional(member)
    missing = []
    for module, where in sorted(imported_modules(member).items()):
        distribution = distribution_of(module, own)
        if distribution is not None and distribution != own and distribution not in needs:
            missing.append(f"{module} ({distribution}, imported in {where})")
    assert missing == [], f"{own} imports what it does not declare: {missing}"


@pytest.mark.parametrize("member", MEMBERS, ids=[member.name for member in MEMBERS])
def test_a_member_carries_types_readme_classifiers_and_licence(member: Path) -> None:
    project = tomllib.loads((member / "pyproject.toml").read_text())["project"]
    (package,) = (member / "src" / "viewfinder").iterdir()
    assert (package / "py.typed").is_file(), f"{package} has no py.typed"
    assert project.get("readme") and (member / project["readme"]).is_file()
    assert any(c.startswith("Programming Language :: Python") for c in project["classifiers"])
    assert project.get("license") == "MIT"
    assert (member / "LICENSE").is_file()
