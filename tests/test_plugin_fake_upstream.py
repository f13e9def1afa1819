"""The fake_upstream fixture and FakeUpstream, through pytester."""

from __future__ import annotations

import pytest

# A tiny tool on httpx, mapping statuses by hand, shared by the pytester runs below.
TOOL = """
import httpx
import pytest_nucleo as nucleo

URL = "https://shop.example/orders/"
CLIENT = httpx.Client()


def map_response(response):
    if response.status_code == 404:
        raise nucleo.ResourceNotFoundException("order", response.url.path.rsplit("/", 1)[-1])
    if response.status_code == 429:
        raise nucleo.UpstreamThrottleException(
            "Shop", "too many requests", float(response.headers.get("Retry-After", 0))
        )
    if response.status_code >= 400:
        raise nucleo.ExternalServiceException("Shop", f"HTTP {response.status_code}")
    return response.json()


def get_order(number, client=None):
    try:
        response = (client or CLIENT).get(URL + number)
    except httpx.TransportError as exc:
        raise nucleo.ExternalServiceException("Shop", str(exc), exc) from exc
    return map_response(response)


async def aget_order(number):
    async with httpx.AsyncClient() as client:
        try:
            response = await client.get(URL + number)
        except httpx.TransportError as exc:
            raise nucleo.ExternalServiceException("Shop", str(exc), exc) from exc
    return map_response(response)
"""


@pytest.fixture
def shop(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(shop=TOOL)
    return pytester


def test_statuses_timeouts_and_refusals_sync(shop: pytest.Pytester) -> None:
    shop.makepyfile(
        """
        import httpx
        from pytest_nucleo import ExternalServiceException, ResourceNotFoundException
        from pytest_nucleo.testing import fails_with
        from shop import get_order

        def test_found(fake_upstream):
            fake_upstream.get("https://shop.example/orders/1").respond(200, json={"id": "1"})
            assert get_order("1") == {"id": "1"}

        def test_not_found(fake_upstream):
            fake_upstream.get("https://shop.example/orders/99").respond(404, text="no such order")
            with fails_with(ResourceNotFoundException, correctable=True) as failure:
                get_order("99")
            assert failure.exception.identifier == "99"

        def test_timeout(fake_upstream):
            fake_upstream.get("https://shop.example/orders/1").timeout()
            with fails_with(ExternalServiceException) as failure:
                get_order("1")
            assert isinstance(failure.exception.__cause__, httpx.ReadTimeout)
            assert "The read operation timed out" in failure.explanation
            assert "Mock Error" not in failure.explanation

        def test_refused(fake_upstream):
            fake_upstream.get("https://shop.example/orders/1").connect_error()
            with fails_with(ExternalServiceException) as failure:
                get_order("1")
            assert isinstance(failure.exception.__cause__, httpx.ConnectError)
            assert "Connection refused" in failure.explanation
        """
    )
    shop.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=4)


def test_async_tool(shop: pytest.Pytester) -> None:
    shop.makepyfile(
        """
        import asyncio
        from pytest_nucleo import ResourceNotFoundException, UpstreamThrottleException
        from pytest_nucleo.testing import fails_with
        from shop import aget_order

        def test_async_not_found(fake_upstream):
            fake_upstream.get("https://shop.example/orders/99").respond(404)
            with fails_with(ResourceNotFoundException):
                asyncio.run(aget_order("99"))

        def test_async_throttle(fake_upstream):
            fake_upstream.get("https://shop.example/orders/1").throttle(retry_after=30)
            with fails_with(UpstreamThrottleException) as failure:
                asyncio.run(aget_order("1"))
            assert failure.exception.retry_after == 30
        """
    )
    shop.runpytest().assert_outcomes(passed=2)


def test_throttle_html_error_and_not_json_outcomes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import httpx, pytest

        def test_throttle_429_default(fake_upstream):
            fake_upstream.get("https://api.example/x").throttle()
            response = httpx.get("https://api.example/x")
            assert response.status_code == 429
            assert "Retry-After" not in response.headers
            assert "rate limit" in response.text.lower()

        def test_throttle_403_body_and_date(fake_upstream):
            fake_upstream.get("https://api.example/x").throttle(
                "Wed, 21 Oct 2026 07:28:00 GMT", status=403
            )
            response = httpx.get("https://api.example/x")
            assert response.status_code == 403
            assert response.headers["Retry-After"] == "Wed, 21 Oct 2026 07:28:00 GMT"
            assert "API rate limit exceeded" in response.text

        def test_html_error(fake_upstream):
            fake_upstream.get("https://api.example/x").html_error(502, size=100_000)
            response = httpx.get("https://api.example/x")
            assert response.status_code == 502
            assert response.headers["Content-Type"].startswith("text/html")
            assert len(response.content) == 100_000

        def test_not_json(fake_upstream):
            fake_upstream.get("https://api.example/x").not_json()
            response = httpx.get("https://api.example/x")
            assert response.status_code == 200
            with pytest.raises(ValueError):
                response.json()
        """
    )
    pytester.runpytest().assert_outcomes(passed=4)


def test_sequence_then_exhausted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import httpx
        from pytest_nucleo.testing import respond, timeout, connect_error

        def test_fail_fail_succeed(fake_upstream):
            route = fake_upstream.get("https://api.example/x").sequence(
                timeout(), respond(503), respond(200, json={"ok": True})
            )
            for expected in (httpx.ReadTimeout,):
                try:
                    httpx.get("https://api.example/x")
                except expected:
                    pass
            assert httpx.get("https://api.example/x").status_code == 503
            assert httpx.get("https://api.example/x").json() == {"ok": True}
            assert len(route.calls) == 3

        def test_exhausted(fake_upstream):
            fake_upstream.get("https://api.example/y").sequence(connect_error())
            for _ in range(2):
                try:
                    httpx.get("https://api.example/y")
                except Exception:
                    pass  # a tool that swallows everything still cannot hide it
        """
    )
    result = pytester.runpytest()
    # The test itself fails (not its fixture's teardown), with the message and no traceback.
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_exhausted _*",
            "fake_upstream: GET https://api.example/y was called 2 times, but its sequence has 1"
            " outcomes (GET https://api.example/y -> sequence: connection refused). Add outcomes"
            " to the sequence, or check why the tool calls again.",
            "*= short test summary info =*",
        ],
        consecutive=True,
    )


def test_unmatched_request_names_the_url_and_the_routes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import httpx

        def test_unmatched(fake_upstream):
            fake_upstream.get("https://api.example/orders/1").respond(200)
            httpx.get("https://api.example/orders/1")
            httpx.get("https://api.example/orders/2")

        def test_swallowed(fake_upstream):
            try:
                httpx.post("https://api.example/other")
            except Exception:
                pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_unmatched _*",
            "no fake route for GET https://api.example/orders/2",
            "Add a route for it to the test, with the answer the tool should get:",
            '    fake_upstream.get("https://api.example/orders/2").respond(200, json=...)',
            "The test's routes:",
            "    GET https://api.example/orders/1 -> respond 200",
            'See pytest-nucleo\'s docs, "Fake upstream failures" (https://pytest-nucleo.github.io/pytest-nucleo/how-to/fake-upstream/).',
            "*_ test_swallowed _*",
            "no fake route for POST https://api.example/other",
            "Add a route for it to the test, with the answer the tool should get:",
            '    fake_upstream.post("https://api.example/other").respond(200, json=...)',
            "The test's routes:",
            "    (none)",
        ],
        consecutive=True,
    )
    assert "TimeoutException" not in result.stdout.str()


def test_unused_route_fails_at_teardown_unless_marked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        def test_unused(fake_upstream):
            fake_upstream.get("https://api.example/never").respond(200)

        @pytest.mark.nucleo(assert_all_called=False)
        def test_optional(fake_upstream):
            fake_upstream.get("https://api.example/never").respond(200)

        def test_failed_anyway(fake_upstream):
            fake_upstream.get("https://api.example/never").respond(200)
            assert False, "the test's own failure"
        """
    )
    # -rN: no short summary, which repeats messages as far as the terminal is wide.
    result = pytester.runpytest("-rN")
    result.assert_outcomes(passed=2, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*fake_upstream: 1 route(s) were never called:",
            "*GET https://api.example/never -> respond 200",
            "*@pytest.mark.nucleo(assert_all_called=False)*",
        ]
    )
    assert result.stdout.str().count("were never called") == 1


def test_base_url_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import httpx, pytest

        @pytest.mark.nucleo(base_url="https://api.example/v1")
        def test_relative(fake_upstream):
            fake_upstream.get("/items/1").respond(200, json=[1])
            assert httpx.get("https://api.example/v1/items/1").json() == [1]
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "fake_upstream.get('/relative').respond(200)",
            "*the route URL '/relative' can never match a request*",
        ),
        ("fake_upstream.route('FETCH', 'https://a.example/')", "*unknown HTTP method 'FETCH'*"),
        ("fake_upstream.get('https://a.example/').respond(999)", "*unknown HTTP status 999*"),
        (
            "fake_upstream.get('https://a.example/').throttle(retry_after=-1)",
            "*retry_after must be a finite number of seconds >= 0*got -1*",
        ),
        (
            "fake_upstream.get('https://a.example/').respond(200, text='a', json={})",
            "*respond() takes one body, got text and json*",
        ),
        (
            "fake_upstream.get('https://a.example/').sequence(404)",
            "*sequence() takes one or more outcomes*",
        ),
        (
            "fake_upstream.get('https://a.example/').throttle(status=418)",
            "*throttle(status=418) has no realistic default body*",
        ),
        (
            "fake_upstream.get('https://a.example/').always(404)",
            "*always() takes an outcome such as respond(404), got 404*",
        ),
        (
            "fake_upstream.get('https://a.example/').html_error(size=-1)",
            "*size must be a number of bytes >= 0, got -1*",
        ),
        (
            "fake_upstream.get('https://a.example/'); import httpx; httpx.get('https://a.example/')",
            "*GET https://a.example/ was called but no outcome was set: call .respond(...)*",
        ),
    ],
)
def test_misuse_gets_a_clear_error(pytester: pytest.Pytester, body: str, message: str) -> None:
    pytester.makepyfile(
        f"""
        def test_misuse(fake_upstream):
            {body}
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([message])


def test_marker_misuse(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.nucleo(strict=False)
        def test_bad_option(fake_upstream):
            pass

        @pytest.mark.nucleo(expect_leak=True)
        def test_misspelt_without_the_fixture():
            pass

        @pytest.mark.nucleo(expect_leaks="no")
        def test_not_a_flag():
            pass

        @pytest.mark.nucleo(True)
        def test_positional():
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(
        ["*@pytest.mark.nucleo takes keyword arguments only (*), got positional (True,)*"]
    )
    result.stdout.fnmatch_lines(
        ["*@pytest.mark.nucleo(expect_leaks=...) takes True or False, got 'no'*"]
    )
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.nucleo got unknown option(s) strict; it takes assert_all_called, "
            "base_url, expect_leaks, allow_network, allow_hosts, real_waits",
            "*@pytest.mark.nucleo got unknown option(s) expect_leak; it takes assert_all_called, "
            "base_url, expect_leaks, allow_network, allow_hosts, real_waits",
        ]
    )


def test_refuses_beside_respx_mock(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import respx

        def test_both_fixtures(fake_upstream, respx_mock):
            pass

        def test_live_router(request):
            with respx.mock():
                from pytest_nucleo.testing import FakeUpstream
                with FakeUpstream():
                    pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*fake_upstream and respx_mock both patch httpx*",
            "*fake_upstream cannot start: another respx router is already active*",
        ]
    )


def test_refuses_beside_pytest_httpx(pytester: pytest.Pytester) -> None:
    # pytest-httpx is not installed here: a stand-in fixture of its name, and a transport
    # patched the way it patches it (a function defined in the pytest_httpx package).
    pytester.makeconftest(
        """
        import httpx
        import pytest

        def handle_request(self, request):
            return httpx.Response(200)

        handle_request.__module__ = "pytest_httpx._httpx_mock"

        @pytest.fixture
        def httpx_mock():
            yield

        @pytest.fixture
        def patched_transport(monkeypatch):  # pytest-httpx's patch, under another name
            monkeypatch.setattr(httpx.HTTPTransport, "handle_request", handle_request)
        """
    )
    pytester.makepyfile(
        """
        def test_both_fixtures(httpx_mock, fake_upstream):
            pass

        def test_patched_transport(patched_transport, request):
            request.getfixturevalue("fake_upstream")
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*fake_upstream and httpx_mock both patch httpx*",
            "*fake_upstream cannot start: httpx's transport is already patched by "
            "pytest_httpx._httpx_mock (pytest-httpx's httpx_mock, most likely)*",
        ]
    )


def test_refuses_a_patched_transport() -> None:
    import httpx

    from pytest_nucleo.testing import FakeUpstream

    original = httpx.HTTPTransport.handle_request

    def patched(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        raise AssertionError("never called")

    patched.__module__ = "pytest_httpx._httpx_mock"
    httpx.HTTPTransport.handle_request = patched  # type: ignore[method-assign]
    try:
        with pytest.raises(RuntimeError, match="transport is already patched by pytest_httpx"):
            FakeUpstream().start()
    finally:
        httpx.HTTPTransport.handle_request = original  # type: ignore[method-assign]


def test_context_manager_form_inside_given(shop: pytest.Pytester) -> None:
    shop.makepyfile(
        """
        from hypothesis import given, strategies as st
        from pytest_nucleo import ExternalServiceException, ResourceNotFoundException
        from pytest_nucleo.testing import FakeUpstream, fails_with
        from shop import get_order

        @given(status=st.sampled_from([404, 500, 502, 503]), number=st.from_regex(r"[0-9]{8}", fullmatch=True))
        def test_each_example_gets_its_own_upstream(status, number):
            expected = ResourceNotFoundException if status == 404 else ExternalServiceException
            with FakeUpstream() as upstream:
                upstream.get(f"https://shop.example/orders/{number}").respond(status)
                with fails_with(expected):
                    get_order(number)
        """
    )
    shop.runpytest().assert_outcomes(passed=1)


def test_context_manager_verifies_on_exit() -> None:
    from pytest_nucleo.testing import FakeUpstream

    upstream = FakeUpstream()
    with pytest.raises(AssertionError, match=r"1 route\(s\) were never called"), upstream:
        upstream.get("https://api.example/x").respond(200)
