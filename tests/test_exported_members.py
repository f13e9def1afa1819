"""The package namespace is the API: pinned here, kept free of test-time libraries, and lazy."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

from syrupy.assertion import SnapshotAssertion

import pytest_nucleo
import pytest_nucleo.testing


def test_all_is_every_public_name_and_each_resolves() -> None:
    assert set(pytest_nucleo.__all__) == set(pytest_nucleo._WHERE)
    assert len(pytest_nucleo.__all__) == len(set(pytest_nucleo.__all__))
    assert dir(pytest_nucleo) == sorted(pytest_nucleo.__all__)
    for name in pytest_nucleo.__all__:
        value = getattr(pytest_nucleo, name)
        module = f"pytest_nucleo.{pytest_nucleo._WHERE[name]}"
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__ == module, name
        else:
            assert getattr(importlib.import_module(module), name) is value, name


def test_the_public_names_are_pinned(snapshot: SnapshotAssertion) -> None:
    # The test above checks the namespace against itself; this one against a reviewed list,
    # so adding, renaming or dropping a public name shows in the snapshot's diff.
    assert {
        "pytest_nucleo": sorted(pytest_nucleo.__all__),
        "pytest_nucleo.testing": sorted(pytest_nucleo.testing.__all__),
    } == snapshot


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        pytest_nucleo.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "has no attribute 'NoSuchThing'" in str(exc)  # noqa: PT017
    else:
        raise AssertionError("expected an AttributeError")


def test_runtime_core_imports_no_test_library() -> None:
    code = (
        "import sys, pytest_nucleo\n"
        "names = [getattr(pytest_nucleo, name) for name in pytest_nucleo.__all__]\n"
        "leaked = sorted({'pytest', '_pytest', 'hypothesis', 'respx', 'syrupy'} & set(sys.modules))\n"
        "print(' '.join(leaked))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_import_is_lazy() -> None:
    code = "import sys, pytest_nucleo\nprint(sorted(m for m in sys.modules if m.startswith('pytest_nucleo')))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "['pytest_nucleo', 'pytest_nucleo._lazy']"
