"""Whether a failure means "not found": the test a tool makes before it turns a 404 into an
empty result, whatever client, SDK or hook raised it (:func:`is_not_found`)."""

from __future__ import annotations

from ._causes import is_a, iter_chain
from ._chain import recognise_foreign
from ._exceptions import LLMReadableException, ResourceNotFoundException, UpstreamRetryException


def is_not_found(exc: BaseException) -> bool:
    """Whether ``exc`` means that what was asked for does not exist: a 404, as the model would
    read it.

    For a search whose service answers "no results" with a 404::

        try:
            found = client.search(query)
        except Exception as error:
            if nucleo.is_not_found(error):
                return []
            raise

    ``exc`` is read as :func:`unwrap` reads it: an exception of the failure set as itself (an
    :class:`Http404Exception`, any :class:`ResourceNotFoundException`), and any other through
    the same mapping the runtime applies to a client's or an SDK's exception (a urllib
    ``HTTPError``, an httpx ``HTTPStatusError``, a requests ``HTTPError``, an aiohttp
    ``ClientResponseError``, an SDK's error that keeps its answer), its cause chain included.
    So it answers alike for a hooked client (:func:`harden_client`), whose 404 is an
    ``Http404Exception`` already, and for one that is not, where ``except Http404Exception``
    would never match. False for anything else: another status, a transport failure, a retry
    signal, an exception no client or SDK raised.

    A 410 Gone is not "not found" here: the failure set reads it as an unmapped status, the
    service's failure, and a search endpoint that answers 410 has been retired, which an empty
    result would hide. A tool whose service says 410 for a deleted item tests the status
    itself: ``nucleo.unwrap(error)`` is then an :class:`HttpErrorResponse` whose
    ``status_code`` is 410.
    """
    if not isinstance(exc, BaseException):
        raise TypeError(
            "is_not_found() takes the exception a call raised (in an except block: "
            f"is_not_found(error)); got a value of type {type(exc).__name__}"
        )
    # The first failure or retry signal the chain means, as unwrap finds it: a wrapper's
    # cause does not decide when the wrapper itself is a failure of the set.
    for member in iter_chain(recognise_foreign(exc)):
        # By the real class: a faked or raising ``__class__`` decides nothing here.
        if is_a(member, UpstreamRetryException):
            return False
        if is_a(member, LLMReadableException):
            return is_a(member, ResourceNotFoundException)
    return False
