"""A client first imported while a fake runs (inside the test body, or inside the tool as SDKs
do) is faked from that import on; one never imported is never imported for the fake.

Each case runs in a fresh interpreter, where the client is truly not imported yet (the plugins
that would import one at start-up are left out)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests._nested_runs import UNUSED_PLUGINS

# pytest-httpx2's plugin would import httpx2 and langsmith's requests before the test could.
CLEAN = ("-p", "no:cacheprovider", *UNUSED_PLUGINS, "-p", "no:xdist")

CALLS = {
    "requests": """
        import requests
        return requests.get(URL, timeout=5).json()
    """,
    "httpx2": """
        import httpx2
        with httpx2.Client() as client:
            return client.get(URL).json()
    """,
    "aiohttp": """
        import asyncio
        import aiohttp

        async def go():
            async with aiohttp.ClientSession() as session, session.get(URL) as response:
                return await response.json()

        return asyncio.run(go())
    """,
}


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(CALLS))
def test_a_client_imported_only_inside_the_test_body_is_faked(
    pytester: pytest.Pytester, client: str
) -> None:
    body = textwrap.indent(textwrap.dedent(CALLS[client]).strip("\n"), "    ")
    template = textwrap.dedent(
        """
        import sys

        URL = "https://api.lazy.example/items/1"


        def fetch():
            # As an SDK does: the client is imported when the tool first calls.
        BODY


        def test_lazy(fake_upstream):
            assert "CLIENT" not in sys.modules
            fake_upstream.get(URL).respond(200, json={"via": "CLIENT"})
            assert fetch() == {"via": "CLIENT"}
            assert "CLIENT" in sys.modules


        def test_unmatched_after_the_import(fake_upstream):
            try:
                fetch()
            except BaseException:
                pass  # a tool's broad except: the fake still fails the test
        """
    )
    pytester.makepyfile(template.replace("CLIENT", client).replace("BODY", body))
    result = pytester.runpytest_subprocess(*CLEAN)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_unmatched_after_the_import _*",
            "no fake route for GET https://api.lazy.example/items/1",
        ]
    )
    result.stdout.no_fnmatch_line("*blocked a network connection*")


def test_the_watch_imports_nothing_and_is_gone_after_stop() -> None:
    code = (
        "import sys\n"
        "from pytest_nucleo.testing import FakeUpstream\n"
        "heavy = ('aiohttp', 'aioresponses', 'requests', 'responses', 'httpx2', 'httpcore2')\n"
        "finders = list(sys.meta_path)\n"
        "with FakeUpstream(assert_all_called=False):\n"
        "    print(len(sys.meta_path) - len(finders))\n"
        "print(sys.meta_path == finders, sorted(m for m in heavy if m in sys.modules))\n"
        "import requests, requests.adapters, responses\n"
        "print(requests.adapters.HTTPAdapter.send is responses._real_send)\n"
        "print(requests.__spec__.loader is requests.__loader__, type(requests.__loader__).__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.stdout.splitlines() == [
        "1",  # one finder, while the fake runs
        "True []",  # gone after; nothing imported for it
        "True",  # a client imported after the fake stopped is left alone
        "True SourceFileLoader",  # and the client keeps its own loader
    ], result.stderr


def test_a_client_imported_inside_a_context_managed_fake_is_faked_and_restored() -> None:
    code = (
        "import sys\n"
        "from pytest_nucleo.testing import FakeUpstream\n"
        "with FakeUpstream() as upstream:\n"
        "    upstream.get('https://api.lazy.example/x').respond(204)\n"
        "    import requests, responses\n"
        "    print(requests.get('https://api.lazy.example/x').status_code)\n"
        "print(requests.adapters.HTTPAdapter.send is responses._real_send)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.stdout.splitlines() == ["204", "True"], result.stderr
