"""A syrupy extension that stores model texts exactly as the model reads them.

One ``.txt`` file per test module (syrupy's amber container: ``# name:`` headers, each line of
the text indented by two spaces, ``# ---`` between snapshots). Per-module files keep a 500-test
run linear, where one file per snapshot slowed super-linearly; the text itself is stored as is,
without quotes or escapes, so a review diff shows exactly what changed for the model.
"""

from __future__ import annotations

from typing import Any

from syrupy.extensions.amber import AmberDataSerializer, AmberSnapshotExtension


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


class LLMTextSnapshotExtension(AmberSnapshotExtension):
    """``snapshot.use_extension(LLMTextSnapshotExtension)``; the ``llm_snapshot`` fixture."""

    serializer_class = LLMTextSerializer
    """Stores each text as itself (:class:`LLMTextSerializer`)."""
    file_extension = "txt"
    """The snapshot files are ``.txt``: a reviewer reads them as the model does."""
