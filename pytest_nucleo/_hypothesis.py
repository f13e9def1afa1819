"""The ``hypothesis`` entry point: ``st.from_type`` for every exception of the failure set.

Hypothesis calls :func:`register_type_strategies` on every ``import hypothesis`` in a process
where the package is installed, most of which never ask for our types. So the entry point
itself only takes note: importing this module costs nothing (it imports only ``sys``), and the
strategies are built and registered when both sides are there, by whichever comes second:

- the failure set's module already imported: the entry point registers at once;
- not yet: ``pytest_nucleo._exceptions``, once its classes exist, finds this module imported
  (only hypothesis' entry point and tests import it) and registers then.

The strategies import nothing but hypothesis' strategies and the runtime core (never respx,
syrupy or pytest).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

_EXCEPTIONS = "pytest_nucleo._exceptions"
_state = {"entry_point_ran": False, "registered": False}


def register_type_strategies() -> None:
    """Make ``st.from_type(SomeException)`` build realistic members of the failure set.

    Runs from the ``hypothesis`` entry point when hypothesis is imported; registers now if the
    failure set is loaded, else leaves it to the failure set's module when it loads.
    """
    _state["entry_point_ran"] = True
    if _EXCEPTIONS in sys.modules:
        _register()


def failure_set_loaded() -> None:
    """Called by ``pytest_nucleo._exceptions`` once its classes exist."""
    if _state["entry_point_ran"]:
        _register()


def _register() -> None:
    if _state["registered"]:
        return
    _state["registered"] = True
    from hypothesis import strategies as st

    for cls, strategy in _type_strategies().items():
        st.register_type_strategy(cls, strategy)


def _type_strategies() -> dict[type, SearchStrategy[Any]]:
    import string

    from hypothesis import strategies as st

    from pytest_nucleo import _exceptions as n

    names = st.text(string.ascii_letters + "_", min_size=1, max_size=20)
    sentences = st.text(string.ascii_letters + " .,'-", min_size=1, max_size=80)
    values = st.one_of(
        st.text(max_size=50), st.integers(), st.none(), st.booleans(), st.binary(max_size=20)
    )
    maybe = st.none() | sentences
    return {
        n.InvalidInputException: st.builds(n.InvalidInputException, names, values, sentences),
        n.ResourceNotFoundException: st.builds(n.ResourceNotFoundException, names, values),
        n.GuardrailException: st.builds(n.GuardrailException, sentences),
        n.ExternalServiceException: st.builds(n.ExternalServiceException, names, sentences),
        n.UpstreamThrottleException: st.builds(
            n.UpstreamThrottleException, names, sentences, st.none() | st.floats(0, 3600)
        ),
        n.UnauthorizedException: st.builds(n.UnauthorizedException, names, sentences),
        n.PermissionDeniedException: st.builds(n.PermissionDeniedException, sentences),
        n.SystemException: st.builds(n.SystemException, names, sentences),
        n.JobCancelledException: st.builds(n.JobCancelledException),
        n.JobTimeoutException: st.builds(n.JobTimeoutException, st.floats(0, 3600)),
        n.ContextOverflowException: st.builds(n.ContextOverflowException),
        n.PromptNotFoundException: st.builds(n.PromptNotFoundException, names),
        n.CorrectableRuntimeLLMException: st.builds(n.CorrectableRuntimeLLMException, sentences),
        n.UncorrectableRuntimeLLMException: st.builds(
            n.UncorrectableRuntimeLLMException, sentences
        ),
        n.QuotaExhaustedException: st.builds(n.QuotaExhaustedException, names, names, maybe, maybe),
        n.SpendCapExceededException: st.builds(n.SpendCapExceededException, sentences),
        n.ModelNotFoundException: st.builds(n.ModelNotFoundException, names),
        n.ProviderRefusalException: st.builds(n.ProviderRefusalException, names, maybe, maybe),
    }
