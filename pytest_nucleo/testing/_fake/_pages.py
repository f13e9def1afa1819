"""Error pages shaped like the ones proxies and frameworks really send, for ``html_error``.

A tool meets HTML where it asked for JSON when something in front of the service answers for
it: the reverse proxy, the CDN, or the framework's page for an unhandled exception. Each page
here keeps the markup that makes it recognisable, and little more:

- **nginx**: its built-in page (``<center><h1>502 Bad Gateway</h1></center>`` and the
  ``<hr><center>nginx</center>`` tail) with nginx's own reason phrases ("504 Gateway
  Time-out", "503 Service Temporarily Unavailable"), for the statuses nginx has a page for.
- **cloudflare**: the 520 to 526 pages Cloudflare serves when the origin fails it, titled
  "<host> | 522: Connection timed out", with the Browser / Cloudflare / Host status row,
  "What happened?" and the "Cloudflare Ray ID" footer.
- **django**: the page Django serves with debugging off and no template of the project's own
  ("Server Error (500)", "Bad Request (400)", "403 Forbidden", "Not Found").
- **rails**: the static pages a new Rails app serves from ``public/`` ("We're sorry, but
  something went wrong (500)", and its 404 and 422).

Which page a status gets when no server is named (:func:`default_server`): a 520 to 526 is
Cloudflare's, a 500 is Django's, and everything else is nginx's, with the standard reason
phrase for a status nginx has no page of its own for.

A page is as small as the real one unless a ``size`` is asked for: then HTML comments are
appended after the page, as nginx appends its own padding, which a browser (and the body
excerpt) never shows.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from pytest_nucleo._http._status import status_line

Server = Literal["nginx", "cloudflare", "django", "rails"]
SERVERS: tuple[Server, ...] = get_args(Server)

_NGINX_PHRASES = {
    400: "Bad Request",
    401: "Authorization Required",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    405: "Not Allowed",
    406: "Not Acceptable",
    408: "Request Time-out",
    409: "Conflict",
    410: "Gone",
    411: "Length Required",
    412: "Precondition Failed",
    413: "Request Entity Too Large",
    414: "Request-URI Too Large",
    415: "Unsupported Media Type",
    416: "Requested Range Not Satisfiable",
    421: "Misdirected Request",
    429: "Too Many Requests",
    500: "Internal Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Temporarily Unavailable",
    504: "Gateway Time-out",
    505: "HTTP Version Not Supported",
    507: "Insufficient Storage",
}
"""The statuses nginx has a built-in page for, with its phrases (not always the standard ones)."""

_NGINX_PAGE = (
    "<html>\r\n<head><title>{line}</title></head>\r\n<body>\r\n"
    "<center><h1>{line}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)
_NGINX_PADDING = "<!-- a padding to disable MSIE and Chrome friendly error page -->\r\n"

# Cloudflare's heading for each code, what its "What happened?" says, and the advice to the
# site's owner, shortened.
_CLOUDFLARE = {
    520: (
        "Web server is returning an unknown error",
        "There is an unknown connection issue between Cloudflare and the origin web server. "
        "As a result, the web page can not be displayed.",
        "Contact your hosting provider: the web server answered with an empty or unexpected "
        "response.",
    ),
    521: (
        "Web server is down",
        "The web server is not returning a connection. As a result, the web page is not "
        "displaying.",
        "Contact your hosting provider to check that the web server is running.",
    ),
    522: (
        "Connection timed out",
        "The initial connection between Cloudflare's network and the origin web server timed "
        "out. As a result, the web page can not be displayed.",
        "Contact your hosting provider letting them know your web server is not completing "
        "requests.",
    ),
    523: (
        "Origin is unreachable",
        "Cloudflare could not reach the origin web server.",
        "Check your DNS settings, then contact your hosting provider.",
    ),
    524: (
        "A timeout occurred",
        "The origin web server timed out responding to this request.",
        "Contact your hosting provider: the request reached the web server, which did not "
        "answer in time.",
    ),
    525: (
        "SSL handshake failed",
        "Cloudflare is unable to establish an SSL connection to the origin server.",
        "Check the SSL configuration of your web server.",
    ),
    526: (
        "Invalid SSL certificate",
        "The origin web server does not have a valid SSL certificate.",
        "Install a valid certificate on your web server.",
    ),
}

_CLOUDFLARE_PAGE = """\
<!DOCTYPE html>
<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->
<!--[if IE 7]>    <html class="no-js ie7 oldie" lang="en-US"> <![endif]-->
<!--[if IE 8]>    <html class="no-js ie8 oldie" lang="en-US"> <![endif]-->
<!--[if gt IE 8]><!--> <html class="no-js" lang="en-US"> <!--<![endif]-->
<head>
<title>{host} | {code}: {name}</title>
<meta charset="UTF-8" />
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
<meta name="robots" content="noindex, nofollow" />
<meta name="viewport" content="width=device-width,initial-scale=1" />
<link rel="stylesheet" id="cf_styles-css" href="/cdn-cgi/styles/main.css" />
</head>
<body>
<div id="cf-wrapper">
  <div id="cf-error-details" class="p-0">
    <header class="mx-auto pt-10 lg:pt-6 lg:px-8 w-240 lg:w-full mb-8">
      <h1 class="inline-block sm:block sm:mb-2 font-light text-60 leading-tight mr-2">
        <span class="inline-block">{name}</span>
        <span class="code-label">Error code {code}</span>
      </h1>
      <div>Visit <a href="{landing}" target="_blank" rel="noopener noreferrer">cloudflare.com</a> \
for more information.</div>
    </header>
    <div class="my-8 bg-gradient-gray">
      <div class="clearfix md:px-8">
        <div id="cf-browser-status" class="relative w-1/3 float-left text-center">
          <span class="md:block w-full truncate">You</span>
          <h3 class="md:inline-block mt-3 text-2xl font-light">Browser</h3>
          <span class="text-2xl text-green-success">Working</span>
        </div>
        <div id="cf-cloudflare-status" class="relative w-1/3 float-left text-center">
          <span class="md:block w-full truncate">Frankfurt</span>
          <h3 class="md:inline-block mt-3 text-2xl font-light">Cloudflare</h3>
          <span class="text-2xl text-green-success">Working</span>
        </div>
        <div id="cf-host-status" class="cf-error-source relative w-1/3 float-left text-center">
          <span class="md:block w-full truncate">{host}</span>
          <h3 class="md:inline-block mt-3 text-2xl font-light">Host</h3>
          <span class="text-2xl text-red-error">Error</span>
        </div>
      </div>
    </div>
    <div class="w-240 lg:w-full mx-auto mb-8 lg:px-8">
      <div class="w-1/2 md:w-full float-left pr-6 leading-relaxed">
        <h2 class="text-3xl font-normal mb-4">What happened?</h2>
        <p>{what}</p>
      </div>
      <div class="w-1/2 md:w-full float-left leading-relaxed">
        <h2 class="text-3xl font-normal mb-4">What can I do?</h2>
        <h3 class="text-15 font-semibold mb-2">If you're a visitor of this website:</h3>
        <p class="mb-6">Please try again in a few minutes.</p>
        <h3 class="text-15 font-semibold mb-2">If you're the owner of this website:</h3>
        <p>{owner}</p>
      </div>
    </div>
    <div class="cf-error-footer cf-wrapper w-240 lg:w-full py-10 mx-auto text-center">
      <p class="text-13">
        <span class="cf-footer-item sm:block sm:mb-1">Cloudflare Ray ID: \
<strong class="font-semibold">{ray}</strong></span>
        <span class="cf-footer-separator sm:hidden">&bull;</span>
        <span class="cf-footer-item sm:block sm:mb-1"><span>Performance &amp; security by</span> \
<a rel="noopener noreferrer" href="{landing}" id="brand_link" target="_blank">Cloudflare</a></span>
      </p>
    </div><!-- /.error-footer -->
  </div>
</div>
</body>
</html>
"""

# Django's ERROR_PAGE_TEMPLATE (django/views/defaults.py): the title and details of each view.
_DJANGO = {
    400: ("Bad Request (400)", ""),
    403: ("403 Forbidden", ""),
    404: ("Not Found", "The requested resource was not found on this server."),
    500: ("Server Error (500)", ""),
}
_DJANGO_PAGE = """
<!doctype html>
<html lang="en">
<head>
  <title>{title}</title>
</head>
<body>
  <h1>{title}</h1><p>{details}</p>
</body>
</html>
"""

# The public/ pages of a new Rails app: the title, the heading and what follows it.
_RAILS = {
    404: (
        "The page you were looking for doesn't exist (404)",
        "The page you were looking for doesn't exist.",
        "You may have mistyped the address or the page may have moved.",
    ),
    422: (
        "The change you wanted was rejected (422)",
        "The change you wanted was rejected.",
        "Maybe you tried to change something you didn't have access to.",
    ),
    500: (
        "We're sorry, but something went wrong (500)",
        "We're sorry, but something went wrong.",
        "",
    ),
}
_RAILS_PAGE = """\
<!DOCTYPE html>
<html>
<head>
  <title>{title}</title>
  <meta name="viewport" content="width=device-width,initial-scale=1">
  <style>
  .rails-default-error-page {{
    background-color: #EFEFEF;
    color: #2E2F30;
    text-align: center;
    font-family: arial, sans-serif;
    margin: 0;
  }}
  .rails-default-error-page div.dialog {{ width: 95%; max-width: 33em; margin: 4em auto 0; }}
  </style>
</head>

<body class="rails-default-error-page">
  <!-- This file lives in public/{status}.html -->
  <div class="dialog">
    <div>
      <h1>{heading}</h1>
      {detail}
    </div>
    <p>If you are the application owner check the logs for more information.</p>
  </div>
</body>
</html>
"""

_PADDING = "<!-- padding: a large error page, as some servers send -->\n"

_STATUSES: Mapping[Server, tuple[int, ...]] = {
    "nginx": tuple(_NGINX_PHRASES),
    "cloudflare": tuple(_CLOUDFLARE),
    "django": tuple(_DJANGO),
    "rails": tuple(_RAILS),
}
"""The statuses each server has an error page of its own for."""

_NAMES: Mapping[Server, str] = {
    "nginx": "nginx",
    "cloudflare": "Cloudflare",
    "django": "Django",
    "rails": "Rails",
}


def default_server(status: int) -> Server:
    """The server whose page ``status`` gets when none is named: Cloudflare for 520 to 526,
    Django for 500, nginx for every other status."""
    if status in _CLOUDFLARE:
        return "cloudflare"
    if status == 500:
        return "django"
    return "nginx"


@dataclass(frozen=True)
class ErrorPage:
    """One server's error page for one status; ``size`` pads it to that many bytes.

    Build it with :func:`error_page`, which checks the choice; the body and headers are made
    per request, since a Cloudflare page names the host it was asked for.
    """

    server: Server
    status: int
    size: int | None = None

    @property
    def description(self) -> str:
        shown = f" padded to {self.size} bytes" if self.size is not None else ""
        return f"{_NAMES[self.server]} {self.status} error page{shown}"

    def body(self, host: str = "example.com") -> bytes:
        """The page as the server sends it to a request for ``host``, padded to ``size`` (a
        Cloudflare page for a host name longer than ``size`` left room for is sent unpadded)."""
        page = self._markup(host).encode()
        if self.size is None or self.size <= len(page):
            return page
        line = (_NGINX_PADDING if self.server == "nginx" else _PADDING).encode()
        missing = self.size - len(page)
        return page + line * (missing // len(line)) + b" " * (missing % len(line))

    def headers(self, host: str = "example.com") -> dict[str, str]:
        if self.server == "nginx":
            return {"Content-Type": "text/html", "Server": "nginx"}
        if self.server == "cloudflare":
            return {
                "Content-Type": "text/html; charset=UTF-8",
                "Server": "cloudflare",
                "CF-RAY": f"{_ray_id(self.status, host)}-FRA",
            }
        if self.server == "django" and self.status != 500:
            return {"Content-Type": "text/html"}  # the views that name their type say only this
        return {"Content-Type": "text/html; charset=utf-8"}

    def _markup(self, host: str) -> str:
        status = self.status
        if self.server == "cloudflare":
            name, what, owner = _CLOUDFLARE[status]
            shown = html.escape(host)
            landing = (
                "https://www.cloudflare.com/5xx-error-landing?"
                f"utm_source=errorcode_{status}&amp;utm_campaign={shown}"
            )
            return _CLOUDFLARE_PAGE.format(
                host=shown,
                code=status,
                name=name,
                what=what,
                owner=owner,
                ray=_ray_id(status, host),
                landing=landing,
            )
        if self.server == "django":
            title, details = _DJANGO[status]
            return _DJANGO_PAGE.format(title=title, details=details)
        if self.server == "rails":
            title, heading, detail = _RAILS[status]
            return _RAILS_PAGE.format(
                title=title,
                heading=heading,
                detail=f"<p>{detail}</p>" if detail else "",
                status=status,
            )
        phrase = _NGINX_PHRASES.get(status)
        line = f"{status} {phrase}" if phrase else status_line(status).removeprefix("HTTP ")
        return _NGINX_PAGE.format(line=line)


def _ray_id(status: int, host: str) -> str:
    # A fixed id per host and status: realistic, and the same in every run for snapshots.
    return hashlib.sha256(f"{status} {host}".encode()).hexdigest()[:16]


def error_page(status: int, *, server: object = None, size: object = None) -> ErrorPage:
    """The error page ``server`` sends for ``status`` (by default the page of
    :func:`default_server`), padded to ``size`` bytes when given.

    ``status`` must be an error status (400 to 599) the chosen server has a page for; ``size``
    a number of bytes at least the page's own size. Anything else is a ``ValueError`` saying
    what to give instead.
    """
    if not 400 <= status <= 599:
        raise ValueError(
            f"html_error({status}) serves error pages: give a status from 400 to 599, or use "
            f"respond({status}, text=...) for another answer"
        )
    if server is None:
        chosen = default_server(status)
    elif isinstance(server, str) and server in SERVERS:
        chosen = server
        if status not in _STATUSES[chosen]:
            raise ValueError(_unsent(status, chosen))
    else:
        raise ValueError(
            f"html_error(server={server!r}) names no server this fake has pages of: choose one "
            f"of {', '.join(map(repr, SERVERS))}, or leave server out for the usual page of "
            "the status"
        )
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(
                f"size must be a number of bytes >= 0, got {size!r}; leave it out for the "
                "page as the server sends it"
            )
        own = len(ErrorPage(chosen, status).body(host=""))
        if size < own:
            raise ValueError(
                f"size={size} is smaller than the {_NAMES[chosen]} {status} page itself "
                f"({own} bytes): give at least {own}, or leave size out"
            )
    return ErrorPage(chosen, status, size)


def _unsent(status: int, server: Server) -> str:
    listed = ", ".join(map(str, _STATUSES[server]))
    name = _NAMES[server]
    advice = {
        "nginx": "leave server out for an nginx-shaped page with the standard reason phrase",
        "cloudflare": "use server='nginx' for the 502 or 504 page of a proxy behind Cloudflare",
        "django": "use server='nginx' for the page of a proxy in front of Django",
        "rails": "use server='nginx' for the page of a proxy in front of Rails",
    }[server]
    return (
        f"html_error({status}, server={server!r}): {name} has no error page of its own for "
        f"{status}; it has one for {listed}. Pick one of those, or {advice}."
    )
