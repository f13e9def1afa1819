"""Hooking the session or client object of a client, so its failing responses are checked
before the code that sent the request sees them (see ``harden_client``).

A client whose support module can hook its objects defines ``hook_failures(client, check,
mark) -> bool`` there; this module finds it through the registry, like every other part of a
client's support.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from . import support_for

FailureCheck = Callable[[object], None]
"""Called with each failing response of a hooked client (status 400 or more, body read)."""


def hook_failures(client: object, check: FailureCheck, mark: str) -> bool:
    """Make ``client`` (a session or client object) call ``check`` with each failing response,
    before the code that sent the request sees it; a hook of an earlier call with the same
    ``mark`` is replaced. False when ``client`` is of no client whose support can hook it."""
    support = support_for(client)
    hook = getattr(support, "hook_failures", None)
    return bool(hook is not None and hook(client, check, mark))


def replace_marked(hooks: Iterable[Any], hook: Any, mark: str) -> list[Any]:
    """``hooks`` with ``hook``, tagged with ``mark``, in place of any earlier hook of that
    ``mark``: hooking a client twice for the same service checks each response once."""
    hook.nucleo_mark = mark
    return [*(h for h in hooks if getattr(h, "nucleo_mark", None) != mark), hook]
