"""Vendor profiles: one vendor's own rules, packaged, that a client opts into by name.

Generic rules stay generic: the status table, the throttle and quota rules and the wait
dialects read every service the same way. What only one vendor does (GitHub's "wait at least a
minute" for a secondary limit sent without a wait, Slack's failures sent as 200 with ``"ok":
false``) is a profile: a module here with one ``classify(service, view)`` that returns the
failure for a response, or None to leave it to the generic rules. A client names its profile
(``ServiceClient.profile = "github"``); a profile never changes another service's texts. Each
profile cites the vendor's page its rules follow.

Adding a profile is one module here and one line in :data:`PROFILES`.
"""

from __future__ import annotations

import importlib
from typing import Protocol, cast

from pytest_nucleo._exceptions import LLMReadableCheckedException
from pytest_nucleo._http._clients import ResponseView

PROFILES = {
    "aws": "_aws",
    "github": "_github",
    "google": "_google",
    "slack": "_slack",
    "stripe": "_stripe",
}
"""Profile name -> its module here."""


class Profile(Protocol):
    """What one profile's module offers."""

    def classify(self, service: str, view: ResponseView) -> LLMReadableCheckedException | None:
        """The failure ``view`` means under the vendor's rules, or None for the generic ones
        (a 2xx that is a success, a failure the generic rules read right)."""


def check_profile(name: object, owner: str) -> None:
    """Raise a ValueError that lists the profiles when ``name`` is not one (None is none)."""
    if name is not None and name not in PROFILES:
        raise ValueError(
            f"{owner}.profile must be one of {', '.join(map(repr, PROFILES))} or None; got "
            f"{name!r}. A service with rules of its own can override classify() instead."
        )


def profile_failure(
    name: str, service: str, view: ResponseView
) -> LLMReadableCheckedException | None:
    """The failure the profile ``name`` reads in ``view``, or None (see :class:`Profile`)."""
    module = importlib.import_module(f"{__name__}.{PROFILES[name]}")
    return cast(Profile, module).classify(service, view)
