"""What an SDK's frames hold that its exception does not: the request's path, the response's
raw body, the client's credentials.

An SDK raises its exception from inside the call that got the answer, so the frames of the
exception's traceback still hold that call's locals (botocore's ``request_dict`` and ``http``,
PyGithub's ``verb`` and ``url``). They are read, never called into: an attribute read through
``vars`` runs no property (a refreshable credential's property may call the network). An
exception built by hand, or one that lost its traceback (unpickled), has no such frames, and a
reader then says what the exception alone carries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_nucleo._http._clients import frames_of


def innermost_locals(
    exc: BaseException, module: str, function: str | None = None, *, holding: str = ""
) -> Mapping[str, Any] | None:
    """The locals of the innermost frame of ``exc``'s traceback that runs code of ``module``
    (``function`` in it, when given) and has a local named ``holding`` (when given); None when
    no frame does."""
    found: Mapping[str, Any] | None = None
    for frame in frames_of(exc):  # outermost first: the last match is the innermost
        if frame.f_globals.get("__name__") != module:
            continue
        if function is not None and frame.f_code.co_name != function:
            continue
        local = frame.f_locals
        if holding and holding not in local:
            continue
        found = local
    return found


def plain(obj: object, *names: str) -> Any:
    """The first of the instance attributes ``names`` of ``obj`` that is set, read with
    ``vars`` (so no property runs); None when none is, or ``obj`` has no ``__dict__``."""
    try:
        fields = vars(obj)
    except TypeError:
        return None
    for name in names:
        value = fields.get(name)
        if value is not None:
            return value
    return None
