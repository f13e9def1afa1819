"""Where a fake upstream's routed hosts resolve: by default to AS112's block, addresses a tool's
check against non-public destinations accepts, which only the fake answers; with
``nucleo_fake_addresses = shared``, to the shared address space.

The runs through pytester put a recording stand-in below the guard, so nothing they try leaves
the machine: what passed the guard is recorded and gets an OSError.
"""

from __future__ import annotations

import ipaddress
import socket

import httpx
import pytest

from pytest_nucleo.testing import FakeUpstream
from pytest_nucleo.testing._fake import _names
from pytest_nucleo.testing._fake._names import (
    PUBLIC_NETWORK,
    SHARED_NETWORK,
    FakeAddressesExhausted,
    _AddressBook,
)


def test_the_default_block_is_public_to_every_check_and_its_server_is_never_handed_out() -> None:
    # AS112's block (RFC 7535): globally reachable in IANA's registry, so ipaddress agrees.
    assert ipaddress.ip_network("192.31.196.0/24") == PUBLIC_NETWORK
    book = _names._BOOKS["public"]
    first, last = ipaddress.ip_address(book.first), ipaddress.ip_address(book.last)
    assert (str(first), str(last), book.size) == ("192.31.196.2", "192.31.196.254", 253)
    for address in (first, last):
        assert address.is_global
        assert not address.is_private
        assert not address.is_reserved
    assert ipaddress.ip_network("100.64.0.0/10") == SHARED_NETWORK
    assert not ipaddress.ip_address("100.64.0.1").is_global


def test_a_routed_host_resolves_to_a_global_address(fake_upstream: FakeUpstream) -> None:
    fake_upstream.get("https://docs.example/page").respond(200, text="hello")
    address = socket.gethostbyname("docs.example")
    ip = ipaddress.ip_address(address)
    assert ip in PUBLIC_NETWORK
    assert ip.is_global
    [info] = socket.getaddrinfo("docs.example", 443, socket.AF_INET6, socket.SOCK_STREAM)
    assert info[4] == (f"::ffff:{address}", 443, 0, 0)  # mapped: a check reads the IPv4
    assert socket.gethostbyname_ex("DOCS.example.") == ("docs.example", [], [address])
    assert httpx.get("https://docs.example/page").text == "hello"


TOOL = """
import ipaddress
import socket

import httpx
import pytest


def fetch(url):
    # As a fetch tool guarding against server-side request forgery does: resolve the host,
    # and refuse any address that is not a public one.
    host = httpx.URL(url).host
    for *_, sockaddr in socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM):
        if not ipaddress.ip_address(sockaddr[0]).is_global:
            raise ValueError(f"{host} resolves to {sockaddr[0]}, which is not public")
    return httpx.get(url).text


def test_the_tool_reaches_the_fake(fake_upstream):
    fake_upstream.get("https://docs.example/page").respond(200, text="hello")
    assert fetch("https://docs.example/page") == "hello"


def test_a_connection_to_the_address_is_refused(fake_upstream):
    fake_upstream.get("https://docs.example/page").respond(200, text="hello")
    fetch("https://docs.example/page")
    address = socket.gethostbyname("docs.example")
    with socket.socket() as sock:
        sock.settimeout(1)
        sock.connect((address, 443))


@pytest.mark.nucleo(allow_network=True)
def test_even_with_the_network_allowed(fake_upstream):
    fake_upstream.get("https://docs.example/page").respond(200)
    httpx.get("https://docs.example/page")
    socket.create_connection((socket.gethostbyname("docs.example"), 443), timeout=1)


@pytest.mark.nucleo(allow_hosts=["docs.example", "192.31.196.0/24", "100.64.0.0/10"])
def test_even_with_the_host_and_its_network_allowed(fake_upstream):
    fake_upstream.get("https://docs.example/page").respond(200)
    httpx.get("https://docs.example/page")
    with socket.socket() as sock:
        sock.connect_ex((socket.gethostbyname("docs.example"), 443))


def test_an_address_of_the_block_the_fake_never_gave(fake_upstream):
    fake_upstream.get("https://docs.example/page").respond(200)
    httpx.get("https://docs.example/page")
    with socket.socket() as sock:
        sock.connect_ex(("192.31.196.1", 53))
"""


@pytest.mark.parametrize(
    "options",
    [
        (),
        ("--nucleo-guard=off",),
        ("--nucleo-guard=all", "--nucleo-allow-hosts=192.31.196.0/24,docs.example"),
    ],
    ids=["default", "guard-off", "allowed-hosts"],
)
def test_only_the_fake_answers_the_address_whatever_the_guard_s_settings(
    pytester: pytest.Pytester, below_guard: list[str], options: tuple[str, ...]
) -> None:
    pytester.makepyfile(test_tool=TOOL)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", *options)
    result.assert_outcomes(passed=1, failed=4)
    for test in (
        "a_connection_to_the_address_is_refused",
        "even_with_the_network_allowed",
        "even_with_the_host_and_its_network_allowed",
        "an_address_of_the_block_the_fake_never_gave",
    ):
        result.stdout.fnmatch_lines([f"FAILED test_tool.py::test_{test}*"])
    result.stdout.fnmatch_lines(
        [
            "pytest-nucleo blocked a connection to 192.31.196.*:443 by the code under test "
            "(test_tool.py:*): tests do not reach the network. The fake upstream gave this "
            "address to docs.example, which its routes name (GET https://docs.example/page -> "
            "respond 200*), and only the fake answers it*",
            "pytest-nucleo blocked a connection to 192.31.196.1:53 by the code under test *: "
            "tests do not reach the network. The fake upstream gave this address to a host of "
            "a fake upstream*",
        ]
    )
    assert below_guard == []  # not one lookup or connection went below the guard


def test_a_name_keeps_its_address_while_it_is_routed_and_gives_it_up_after() -> None:
    book = _AddressBook(PUBLIC_NETWORK, int(PUBLIC_NETWORK[2]), int(PUBLIC_NETWORK[3]))
    routed = {"a.example", "b.example"}
    a = book.address("a.example", routed.__contains__)
    b = book.address("b.example", routed.__contains__)
    assert (a, b) == ("192.31.196.2", "192.31.196.3")
    assert book.address("a.example", routed.__contains__) == a  # the same answer twice
    # Full: a third name takes the address of the name no fake routes any more.
    routed = {"a.example", "c.example"}
    assert book.address("c.example", routed.__contains__) == b
    assert book.name_at == {a: "a.example", b: "c.example"}
    # Full, and every name routed: no address is given twice; the error says what to do.
    routed = {"a.example", "c.example", "d.example"}
    with pytest.raises(FakeAddressesExhausted) as caught:
        book.address("d.example", routed.__contains__)
    assert str(caught.value) == (
        "pytest-nucleo cannot resolve d.example: the running fake upstreams route more than 2 "
        "host names at once, and the fake gives each one of the 2 addresses of "
        "192.31.196.0/24. Route fewer hosts in one test, or set nucleo_fake_addresses = shared "
        "(the shared address space, 100.64.0.0/10, about four million addresses, which a tool "
        "that refuses non-public addresses refuses)"
    )
    assert not isinstance(caught.value, OSError)  # never mistaken for a DNS failure


def test_a_process_that_sees_more_names_than_the_block_holds_gets_no_wrong_answer() -> None:
    seen: dict[str, str] = {}
    for number in range(300):  # more names than the block's 253, one fake at a time
        host = f"host{number}.example"
        with FakeUpstream(assert_all_called=False) as upstream:
            upstream.get(f"https://{host}/").respond(200)
            upstream.get("https://steady.example/").respond(200)  # routed in every fake
            address = socket.gethostbyname(host)
            assert ipaddress.ip_address(address) in PUBLIC_NETWORK
            assert address not in ("192.31.196.0", "192.31.196.1", "192.31.196.255")
            assert _names.fake_name_of(address) == host
            seen.setdefault("steady", socket.gethostbyname("steady.example"))
            assert socket.gethostbyname("steady.example") == seen["steady"]
            assert address != seen["steady"]
    with FakeUpstream(assert_all_called=False) as upstream:
        # Many names routed at once each get an address of their own.
        hosts = [f"many{number}.example" for number in range(200)]
        for host in hosts:
            upstream.get(f"https://{host}/").respond(200)
        addresses = [socket.gethostbyname(host) for host in hosts]
        assert len(set(addresses)) == len(hosts)
