"""The type stubs (strata/_strata.pyi) name exactly what the extension module has."""
from __future__ import annotations

import ast
import pathlib

import strata
from strata import _strata

STUBS = pathlib.Path(strata.__file__).with_name("_strata.pyi")


def stub_classes() -> dict:
    out = {}
    for node in ast.parse(STUBS.read_text()).body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for n in node.body:
                if isinstance(n, ast.FunctionDef):
                    members.add(n.name)
                elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                    members.add(n.target.id)
            out[node.name] = members
    return out


def test_stubs_match_the_module():
    stubs = stub_classes()
    public = {n for n in vars(_strata) if not n.startswith("__")}
    assert public == set(stubs), public ^ set(stubs)
    for name in sorted(public):
        cls = getattr(_strata, name)
        declared = stubs[name] - {"__init__"}
        if issubclass(cls, BaseException):
            assert declared <= {"code", "message"}, name
        elif hasattr(cls, "__members__"):  # an enum
            assert declared == set(cls.__members__), (name, declared ^ set(cls.__members__))
        else:
            actual = {a for a in vars(cls) if not a.startswith("_")}
            assert actual == declared, (name, actual ^ declared)


def test_package_exports():
    for name in strata.__all__:
        assert hasattr(strata, name), name
