from __future__ import annotations

import hypothesis  # noqa: F401 - imported once here, not again in every in-process pytester run
import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

pytest_plugins = ["pytester"]


class TextSnapshotExtension(SingleFileSnapshotExtension):
    """Model texts stored exactly as the model reads them, one reviewable .txt file each."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def text_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TextSnapshotExtension)
