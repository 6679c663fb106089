"""Which proxy, if any, a request goes through: the environment's variables, read as users expect.

``HTTPS_PROXY`` / ``HTTP_PROXY`` name the proxy for that scheme, ``ALL_PROXY`` for any; the
lower-case spelling wins over the upper-case one (curl, requests and Go read them so). A value
without a scheme is an ``http://`` proxy; ``http://`` and ``https://`` proxies are spoken
(urllib3's ``ProxyManager``), anything else (``socks5://``) is refused with the reason.
Credentials in the proxy URL (``http://user:p%40ss@proxy:3128``) become a
``Proxy-Authorization`` header and never appear in the proxy's printed name.

``NO_PROXY`` (``no_proxy`` first) is a list separated by commas or spaces; an entry matches
a host as ``urllib.request.proxy_bypass_environment`` matches it, extended with CIDR ranges,
as requests and docker read them:

- ``*`` matches every host;
- a name (``corp``, ``.corp``, ``*.corp``) matches that name and every name below it;
- an IP address matches that address; a CIDR range (``10.0.0.0/8``, ``fd00::/8``) every
  address in it (a name is not resolved to be compared with a range);
- any of these with ``:PORT`` (``[::1]:5000`` for IPv6) matches only requests to that port.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from imagelint.untrusted import int_or_none

PROXY_SCHEMES = ("http", "https")


class ProxyConfigError(ValueError):
    """A proxy variable names something imagelint cannot use (no host, a SOCKS proxy)."""


@dataclass(frozen=True)
class Proxy:
    """A proxy to send requests through: ``url`` holds no credentials (it may be printed);
    ``username`` and ``password`` (from the variable's URL, percent-decoded) go as
    ``Proxy-Authorization``."""

    url: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        """``host:port``, for messages."""
        return self.url.split("://", 1)[1]


def _variable(name: str, environ: Mapping[str, str]) -> str:
    return (environ.get(name) or environ.get(name.upper()) or "").strip()


def proxy_for(scheme: str, host: str, port: int, environ: Mapping[str, str] | None = None) -> Proxy | None:
    """The proxy the environment names for a request to ``scheme://host:port``, or None."""
    env = os.environ if environ is None else environ
    value = _variable(f"{scheme}_proxy", env) or _variable("all_proxy", env)
    if not value or bypasses_proxy(host, port, _variable("no_proxy", env)):
        return None
    return parse_proxy_url(value)


def parse_proxy_url(value: str) -> Proxy:
    parts = urlsplit(value if "://" in value else f"http://{value}")
    scheme = parts.scheme.lower()
    if scheme not in PROXY_SCHEMES:
        raise ProxyConfigError(f"the proxy variable names a {scheme[:20]}:// proxy; imagelint speaks http:// and https:// proxies")
    try:
        host, port = parts.hostname, parts.port or (443 if scheme == "https" else 80)
    except ValueError:  # a port that is no number
        raise ProxyConfigError("the proxy variable's port is not a number") from None
    if not host:
        raise ProxyConfigError("the proxy variable names no host")
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if parts.username is None:
        return Proxy(f"{scheme}://{netloc}")
    return Proxy(f"{scheme}://{netloc}", unquote(parts.username), unquote(parts.password or ""))


def bypasses_proxy(host: str, port: int, no_proxy: str) -> bool:
    """Whether a ``NO_PROXY`` value exempts ``host`` (a name or an IP address) on ``port``."""
    host = host.strip("[]").rstrip(".").lower()
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for entry in no_proxy.replace(",", " ").split():
        entry = entry.lower()
        if entry == "*":
            return True
        entry, entry_port = _split_port(entry)
        if entry_port is not None and entry_port != port:
            continue
        if address is not None:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass  # a name: it does not match an address
            continue
        name = entry.lstrip("*").lstrip(".").rstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


def _split_port(entry: str) -> tuple[str, int | None]:
    """``host:port``, ``[v6]:port`` or ``v4/len:port`` into the host part and the port (None when absent)."""
    if entry.startswith("["):
        inside, _, rest = entry[1:].partition("]")
        return inside, int_or_none(rest[1:], 5) if rest.startswith(":") else None
    if entry.count(":") == 1:
        name, _, port = entry.partition(":")
        if (number := int_or_none(port, 5)) is not None:
            return name, number
    return entry, None  # no port, or a bare IPv6 address or range
