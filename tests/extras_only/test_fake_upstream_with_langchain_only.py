"""fake_upstream with only ``pytest-nucleo[pytest,langchain]`` installed: langchain brings
requests (through langsmith) but not ``responses``, the library that fakes it, and no aiohttp.

``.ci/extras-only`` runs this module in an environment of exactly that, where a test that uses
httpx must pass although requests is imported, and a request sent with requests must be refused
with the extra that brings its fake. The main suite collects it too, with everything
installed: the refusal's test skips there (tests/test_fake_clients.py blocks the import of
``responses`` in a run of its own to check the same), and the rest passes as it is. It imports
nothing of the suite's own helpers, which need the test extra's libraries.
"""

from __future__ import annotations

import importlib.util

import httpx
import pytest
import requests

from pytest_nucleo.testing import FakeUpstream

URL = "https://api.upstream.example/items/1"
RESPONSES_INSTALLED = importlib.util.find_spec("responses") is not None


def test_a_tool_on_httpx_is_faked_beside_requests_without_its_fake(
    fake_upstream: FakeUpstream,
) -> None:
    fake_upstream.get(URL).respond(200, json={"id": 1})
    assert httpx.get(URL).json() == {"id": 1}


@pytest.mark.skipif(
    RESPONSES_INSTALLED,
    reason="responses is installed here, so requests is faked: this is .ci/extras-only's case",
)
def test_a_request_sent_with_requests_is_refused_naming_the_extra() -> None:
    upstream = FakeUpstream(assert_all_called=False).start()
    try:
        with pytest.raises(AssertionError) as caught:
            requests.get(URL, timeout=5)
    finally:
        upstream.stop()
    assert "pip install 'pytest-nucleo[requests]' brings it" in str(caught.value)
    # Recorded too: a tool that swallowed the error still fails its test.
    assert [str(problem) for problem in upstream.problems] == [str(caught.value)]


@pytest.mark.skipif(
    not RESPONSES_INSTALLED, reason="responses is not installed: requests cannot be faked here"
)
def test_a_request_sent_with_requests_is_faked_where_responses_is_installed(
    fake_upstream: FakeUpstream,
) -> None:
    fake_upstream.get(URL).respond(200, json={"id": 1})
    assert requests.get(URL, timeout=5).json() == {"id": 1}
