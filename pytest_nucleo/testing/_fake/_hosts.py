"""Host names and addresses as the network guard compares them, and the hosts it allows."""

from __future__ import annotations

import fnmatch
import ipaddress
from collections.abc import Iterable


def host_name(host: object) -> str:
    """``host`` (a str or bytes, bracketed or with a final dot) as one spelling, lowercased."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    return str(host).strip("[]").rstrip(".").lower()


def bracketed(host: str) -> str:
    """``host`` as a URL or ``host:port`` writes it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def ip_of(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``name`` spells (an IPv4-mapped IPv6 one as IPv4), or None for a name."""
    try:
        ip = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return None
    mapped = getattr(ip, "ipv4_mapped", None)
    return mapped if mapped is not None else ip


def _everything(where: str, raw: str) -> ValueError:
    return ValueError(
        f"{where}: {raw!r} allows every host, which would turn the network guard off "
        "without saying so: name the hosts ('*.internal.example', '10.0.0.0/8'), or say it "
        "with --nucleo-guard=off (ini nucleo_guard = off) or, for one test, "
        "@pytest.mark.nucleo(allow_network=True)"
    )


class AllowList:
    """The hosts a guarded test may still reach (``--nucleo-allow-hosts``): a name
    (``db.internal``), a name pattern (``*.internal``), an address or a network
    (``10.0.0.0/8``). The addresses an allowed name resolves to are allowed too, so that the
    connection after the lookup goes through."""

    def __init__(self, entries: Iterable[str], where: str = "--nucleo-allow-hosts") -> None:
        self.names: list[str] = []
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self.resolved: set[str] = set()  # the addresses allowed names resolved to
        for raw in entries:
            stripped = raw.strip()
            entry = host_name(stripped)
            if not entry:
                continue
            if stripped.startswith("[") != stripped.endswith("]"):
                raise ValueError(
                    f"{where}: {raw!r} has an unclosed bracket: write an IPv6 address as "
                    "'::1' or '[::1]'"
                )
            try:
                network = ipaddress.ip_network(entry, strict=False)
            except ValueError:
                if not all(part.isalnum() or part in "-_*?." for part in entry):
                    raise ValueError(
                        f"{where}: {raw!r} is neither a host name, a name pattern "
                        "such as '*.internal', an address nor a network such as '10.0.0.0/8'"
                    ) from None
                if "*" in entry and not entry.strip("*?."):
                    raise _everything(where, raw) from None
                self.names.append(entry)
            else:
                if network.prefixlen == 0:
                    raise _everything(where, raw) from None
                self.networks.append(network)

    def __bool__(self) -> bool:
        return bool(self.names or self.networks)

    def note(self, host: object, addresses: Iterable[object]) -> None:
        """After the lookup of ``host``: if it is an allowed name, allow its addresses."""
        name = host_name(host)
        if ip_of(name) is None and self.allows(name):
            self.resolved.update(host_name(address) for address in addresses)

    def allows(self, name: str) -> bool:
        if name in self.resolved:
            return True
        ip = ip_of(name)
        if ip is not None:
            return any(ip in network for network in self.networks)
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.names)
