"""The package namespace is the API: pinned here, and kept free of test-time libraries."""

from __future__ import annotations

import subprocess
import sys

import pytest_nucleo


def test_all_matches_public_names() -> None:
    public = {
        name
        for name, value in vars(pytest_nucleo).items()
        if not name.startswith("_") and getattr(value, "__module__", "").startswith("pytest_nucleo")
    }
    constants = {
        name for name in vars(pytest_nucleo) if name.isupper() and not name.startswith("_")
    }
    assert set(pytest_nucleo.__all__) == public | constants
    assert len(pytest_nucleo.__all__) == len(set(pytest_nucleo.__all__))
    for name in pytest_nucleo.__all__:
        assert hasattr(pytest_nucleo, name), name


def test_runtime_core_imports_no_test_library() -> None:
    code = (
        "import sys, pytest_nucleo\n"
        "leaked = sorted({'pytest', '_pytest', 'hypothesis', 'respx', 'syrupy'} & set(sys.modules))\n"
        "print(' '.join(leaked))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
