"""The message of an exception, read safely.

``str(exc)`` runs the exception's own ``__str__``, which may raise or return something that is
not a string; every helper that reads a foreign exception's message reads it here, so such an
exception becomes a message that says so instead of escaping from code that must not raise.
"""

from __future__ import annotations


def readable_message(exc: BaseException) -> str | None:
    """``str(exc)``, or None when its ``__str__`` raises or returns something not a string."""
    try:
        text = exc.__str__()
    except (Exception, GeneratorExit):
        # A GeneratorExit from __str__ is a bug in the exception, not a stop: a stop is a
        # KeyboardInterrupt or a SystemExit, which go on.
        return None
    if not isinstance(text, str):
        return None
    # A str subclass may override what later code calls on it: keep a plain copy.
    return text if type(text) is str else "".join((text,))


def message_of(exc: BaseException) -> str:
    """``str(exc)``, or a note saying the message could not be read. Never raises."""
    text = readable_message(exc)
    if text is None:
        return f"(the message of this {type(exc).__name__} could not be read)"
    return text


def described(exc: BaseException) -> str:
    """``"ClassName: message"``, or only the class name when the message is blank or cannot
    be read (no dangling colon)."""
    text = (readable_message(exc) or "").strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
