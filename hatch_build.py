"""A hatchling build hook: the sdist leaves out the top .gitignore.

hatchling always copies the project's .gitignore into an sdist (it reads it to exclude caches).
An sdist is not a checkout, so the file would only be a stray in it.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class SdistWithoutGitignore(BuildHookInterface):  # type: ignore[type-arg]  # generic over its config
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "sdist":
            build_data["force_include"] = {
                source: target
                for source, target in build_data["force_include"].items()
                if target != ".gitignore"
            }
