"""The ``hypothesis`` entry point: ``st.from_type`` for every exception of the failure set.

Hypothesis runs :func:`register_type_strategies` when it is imported, so this module imports
nothing but hypothesis' strategies and the runtime core (never respx, syrupy or pytest).
"""

from __future__ import annotations

import string
from typing import Any

from hypothesis import strategies as st

import pytest_nucleo as n

_names = st.text(string.ascii_letters + "_", min_size=1, max_size=20)
_sentences = st.text(string.ascii_letters + " .,'-", min_size=1, max_size=80)
_values = st.one_of(
    st.text(max_size=50), st.integers(), st.none(), st.booleans(), st.binary(max_size=20)
)


def _type_strategies() -> dict[type, st.SearchStrategy[Any]]:
    maybe = st.none() | _sentences
    return {
        n.InvalidInputException: st.builds(n.InvalidInputException, _names, _values, _sentences),
        n.ResourceNotFoundException: st.builds(n.ResourceNotFoundException, _names, _values),
        n.GuardrailException: st.builds(n.GuardrailException, _sentences),
        n.ExternalServiceException: st.builds(n.ExternalServiceException, _names, _sentences),
        n.UpstreamThrottleException: st.builds(
            n.UpstreamThrottleException, _names, _sentences, st.none() | st.floats(0, 3600)
        ),
        n.UnauthorizedException: st.builds(n.UnauthorizedException, _names, _sentences),
        n.PermissionDeniedException: st.builds(n.PermissionDeniedException, _sentences),
        n.SystemException: st.builds(n.SystemException, _names, _sentences),
        n.JobCancelledException: st.builds(n.JobCancelledException),
        n.JobTimeoutException: st.builds(n.JobTimeoutException, st.floats(0, 3600)),
        n.ContextOverflowException: st.builds(n.ContextOverflowException),
        n.PromptNotFoundException: st.builds(n.PromptNotFoundException, _names),
        n.CorrectableRuntimeLLMException: st.builds(n.CorrectableRuntimeLLMException, _sentences),
        n.UncorrectableRuntimeLLMException: st.builds(
            n.UncorrectableRuntimeLLMException, _sentences
        ),
        n.QuotaExhaustedException: st.builds(
            n.QuotaExhaustedException, _names, _names, maybe, maybe
        ),
        n.SpendCapExceededException: st.builds(n.SpendCapExceededException, _sentences),
        n.ModelNotFoundException: st.builds(n.ModelNotFoundException, _names),
        n.ProviderRefusalException: st.builds(n.ProviderRefusalException, _names, maybe, maybe),
    }


def register_type_strategies() -> None:
    """Make ``st.from_type(SomeException)`` build realistic members of the failure set.

    Runs from the ``hypothesis`` entry point when hypothesis is imported.
    """
    for cls, strategy in _type_strategies().items():
        st.register_type_strategy(cls, strategy)
