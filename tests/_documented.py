"""One documented error response: what a vendor's documentation shows, and what it means."""

from __future__ import annotations

from dataclasses import dataclass

NOW = "Mon, 07 Dec 2026 12:00:00 GMT"  # epoch 1796644800: the clock the tests run at
NOW_EPOCH = 1796644800


# fmt: off
@dataclass(frozen=True)
class Documented:
    id: str                 # unique slug, "github-primary-rate-limit"
    service: str            # "GitHub"
    status: int
    headers: dict[str, str]
    body: str               # the raw body text exactly as it would be sent (JSON text, XML, HTML)
    source: str             # URL of the documentation page it follows
    meaning: str            # one of: "wait" (throttled: waiting helps), "quota" (quota or billing exhausted: only the user can act), "credentials", "permission", "invalid" (the model must fix an argument), "not-found", "server" (service failed; may work later), "overloaded", "timeout-may-have-acted" (504/524: gateway timed out, the service may have acted), "ok-false" (a 2xx that is a failure, e.g. Slack)
    wait: float | None      # seconds this response says to wait, as the vendor means it, measured from NOW; None when it states none
    fields: tuple[str, ...] = ()   # argument/field names the body says are at fault (for "invalid"), else ()
    note: str = ""          # one line: what the docs say this means, and anything you filled in
# fmt: on
