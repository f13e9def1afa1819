"""What real services say, read as a tool author's client reads it.

Every response here follows a vendor's own documentation (each entry cites its page, in
``_service_corpus_a.py`` and ``_service_corpus_b.py``). Each one is sent through a plain
``ServiceClient`` (with the vendor's profile where one is shipped) and must come out as the
class its documentation means, with the wait it states, the fields it names, a clean text,
and the exact text reviewed in a snapshot.
"""

from __future__ import annotations

import httpx
import pytest
import respx
from _documented import NOW_EPOCH, Documented
from _service_corpus_a import CORPUS_A
from _service_corpus_b import CORPUS_B
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.testing import text_problems
from pytest_nucleo.testing._contract._wording import enforced_wait

CORPUS = CORPUS_A + CORPUS_B

# The profile a client of each service opts into, where one is shipped.
PROFILE = {
    "GitHub": "github",
    "Slack": "slack",
    "Stripe": "stripe",
    "AWS S3": "aws",
    "AWS DynamoDB": "aws",
    "Google APIs": "google",
}

# What each documented meaning is, in the failure set.
MEANING: dict[str, type[Exception]] = {
    "wait": nucleo.UpstreamThrottleException,
    "quota": nucleo.HttpQuotaExhaustedException,
    "credentials": nucleo.UnauthorizedException,
    "permission": nucleo.UnauthorizedException,
    "invalid": nucleo.InvalidInputException,
    "not-found": nucleo.ResourceNotFoundException,
    "server": nucleo.ExternalServiceException,
    "overloaded": nucleo.ExternalServiceException,
    "timeout-may-have-acted": nucleo.ExternalServiceException,
}

BASE = "https://api.example-vendor.test"
# The path each call goes to; a Slack method is named by it, and its texts name the method.
PATH = {"Slack": "/api/conversations.info"}


def failure_of(entry: Documented, monkeypatch: pytest.MonkeyPatch) -> nucleo.LLMReadableException:
    # Responses without a Date of their own are read against the corpus's clock.
    monkeypatch.setattr("pytest_nucleo._http._waits.time.time", lambda: float(NOW_EPOCH))

    class Client(nucleo.ServiceClient):
        service_name = entry.service
        base_url = BASE
        profile = PROFILE.get(entry.service)

    path = PATH.get(entry.service, "/v1/call")
    with respx.mock:
        respx.get(f"{BASE}{path}").mock(
            return_value=httpx.Response(
                entry.status, headers=entry.headers, content=entry.body.encode()
            )
        )
        with pytest.raises(nucleo.LLMReadableException) as raised:
            Client().get_json(path)
    return raised.value


def test_the_corpus_is_wide_enough() -> None:
    assert len(CORPUS) >= 50
    assert len({entry.service for entry in CORPUS}) >= 20
    assert len({entry.id for entry in CORPUS}) == len(CORPUS)
    assert all(entry.source.startswith("https://") for entry in CORPUS)


@pytest.mark.parametrize("entry", CORPUS, ids=lambda e: e.id)
def test_a_documented_response_reads_as_its_documentation_means(
    entry: Documented, monkeypatch: pytest.MonkeyPatch, llm_snapshot: SnapshotAssertion
) -> None:
    failure = failure_of(entry, monkeypatch)
    text = failure.explain_to_llm()
    expected = MEANING.get(entry.meaning)
    if expected is not None:
        assert isinstance(failure, expected), (type(failure).__name__, text)
    if entry.meaning == "server":
        assert not isinstance(failure, nucleo.UpstreamThrottleException), text
    if entry.meaning == "timeout-may-have-acted":
        assert "may have acted" in text
    if entry.meaning in ("invalid", "not-found"):
        assert failure.is_correctable
    elif entry.meaning == "ok-false":  # a 2xx that is a failure: its error code says which
        assert not isinstance(failure, nucleo.SystemException)
    else:
        assert not failure.is_correctable
    if entry.meaning == "quota":
        assert "tell the user" in text
    wait = getattr(failure, "retry_after", None)
    if entry.wait is None:
        assert wait is None or entry.meaning == "quota", wait
    else:
        assert wait is not None
        assert abs(wait - entry.wait) <= 1.0, (wait, entry.wait)
    for name in entry.fields:
        assert name in text, (name, text)
    assert text_problems(text, retry_after=enforced_wait(failure)) == []
    assert text == llm_snapshot
