"""A syrupy extension that stores model texts exactly as the model reads them.

One ``.txt`` file per test module (syrupy's amber container: ``# name:`` headers, each line of
the text indented by two spaces, ``# ---`` between snapshots). Per-module files keep a 500-test
run linear, where one file per snapshot slowed super-linearly; the text itself is stored as is,
without quotes or escapes, so a review diff shows exactly what changed for the model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from syrupy.data import SnapshotCollection
from syrupy.extensions.amber import AmberDataSerializer, AmberSnapshotExtension

from pytest_nucleo.testing._wording_changes import wording_change_lines

updating = False
"""Whether the run rewrites snapshots (``--snapshot-update``), as the ``llm_snapshot`` fixture
last saw it: a file that rewriting mends is then read as outdated, not refused."""


class SnapshotFileError(Exception):
    """A snapshot file ``llm_snapshot`` cannot read: its message names the file, what is wrong
    and how to mend it."""

    def __init__(self, message: str, *, mended_by_update: bool, readable: bool = True) -> None:
        super().__init__(message)
        self.mended_by_update = mended_by_update
        """Whether ``pytest --snapshot-update`` rewrites the file (not for a folder)."""
        self.readable = readable
        """Whether syrupy can read the file at all (not when it is not UTF-8)."""


def _problem(filepath: str, version: str) -> SnapshotFileError | None:
    """What is wrong with the snapshot file at ``filepath``, or None (a missing file is fine)."""
    path = Path(filepath)
    if path.is_dir():
        return SnapshotFileError(
            f"the snapshot file {path} is a folder: llm_snapshot stores the texts of a test "
            "module in a file of that name. Move or rename the folder, then run pytest "
            "--snapshot-update to write the file.",
            mended_by_update=False,
        )
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        return SnapshotFileError(
            f"the snapshot file {path} is not UTF-8 text: byte 0x{raw[error.start]:02x} on line "
            f"{line} is not UTF-8 (it was saved in another encoding, or damaged). Fix that line, "
            "or delete the file and run pytest --snapshot-update to write it again.",
            mended_by_update=True,
            readable=False,
        )
    first = text.split("\n", 1)[0].rstrip("\r")
    expected = f"# serializer version: {version}"
    if text and first != expected:
        said = f"its first line is {first!r}" if first else "its first line is empty"
        return SnapshotFileError(
            f"the snapshot file {path} was not written by llm_snapshot, or not by this version: "
            f"{said}, where llm_snapshot writes {expected!r} (a file of syrupy's snapshot "
            "fixture, or edited by hand?). Run pytest --snapshot-update to write it again, and "
            "review the diff.",
            mended_by_update=True,
        )
    return None


class LLMTextSerializer(AmberDataSerializer):
    """Serialises a model text as itself, with ``\\r\\n`` and ``\\r`` normalised to ``\\n``."""

    VERSION = "nucleo-text-1"
    """syrupy's serializer version, ours: a change of format would be a new version."""

    @classmethod
    def serialize(cls, data: Any, **kwargs: Any) -> str:
        """The text itself, line endings normalised to ``\n``; anything but a ``str`` is a
        ``TypeError`` (use syrupy's ``snapshot`` for data)."""
        if not isinstance(data, str):
            raise TypeError(
                f"llm_snapshot stores model texts (str), got {type(data).__name__}: compare "
                "failure.explanation or result.text, or use syrupy's snapshot fixture for data"
            )
        return str(data).replace("\r\n", "\n").replace("\r", "\n")

    @classmethod
    def read_file(cls, filepath: str) -> SnapshotCollection:
        """The snapshots of ``filepath``; a file that is a folder, is not UTF-8 or has another
        serializer's version line is a :class:`SnapshotFileError` naming it (while snapshots
        are rewritten, only a folder is: the others are read as outdated and rewritten)."""
        problem = _problem(filepath, cls.VERSION)
        if problem is not None:
            if not (updating and problem.mended_by_update):
                raise problem
            if not problem.readable:
                return SnapshotCollection(location=filepath)  # unreadable: written anew
        return super().read_file(filepath)


class LLMTextSnapshotExtension(AmberSnapshotExtension):
    """``snapshot.use_extension(LLMTextSnapshotExtension)``; the ``llm_snapshot`` fixture."""

    serializer_class = LLMTextSerializer
    """Stores each text as itself (:class:`LLMTextSerializer`)."""
    file_extension = "txt"
    """The snapshot files are ``.txt``: a reviewer reads them as the model does."""

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        """syrupy's diff, after a word that the package's own rewording alone explains it,
        when it does (:mod:`pytest_nucleo.testing._wording_changes`)."""
        if isinstance(serialized_data, str) and isinstance(snapshot_data, str):
            yield from wording_change_lines(snapshot_data, serialized_data)
        yield from super().diff_lines(serialized_data, snapshot_data)

    def read_snapshot_collection(self, snapshot_location: str) -> SnapshotCollection:
        """The file's snapshots for syrupy's end-of-run report; a file the tests could not read
        counts as empty there (each test that read it failed, naming it), so that the run
        still ends with its summary."""
        try:
            return super().read_snapshot_collection(snapshot_location)
        except SnapshotFileError as problem:
            if problem.readable:  # its snapshots, as outdated: the tests that use them fail
                return AmberDataSerializer.read_file(snapshot_location)
            return SnapshotCollection(location=snapshot_location)
