"""Two chemistry tools on one service: a search by name and a fetch by compound id.

Both share one RateLimiter, so upstream trouble seen by either slows both down and, if it goes
on, switches both off until the service recovers. The service answers "too busy" with a 503
whose body names PUGREST.ServerBusy: that quirk is mapped in ``classify`` onto the existing
throttle carrier. The fetch wraps its one service call with ``service_call``, so a 404 reaches
the model as a fixable ``cid``; a search that finds nothing returns an empty list.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

import pytest_nucleo as nucleo


class PubChem(nucleo.ServiceClient):
    service_name = "PubChem"
    base_url = "https://pubchem.example/rest/pug"

    def classify(self, response: httpx.Response) -> nucleo.LLMReadableCheckedException | None:
        if response.status_code == 503 and b"PUGREST.ServerBusy" in response.content[:4096]:
            return nucleo.HttpThrottledStatusException(
                self.service_name,
                response.url.path,
                "PUGREST.ServerBusy: too many requests, slow down",
                nucleo.parse_retry_after(response.headers.get("Retry-After")),
                status_code=503,
            )
        return None


pubchem = PubChem(httpx.Client(timeout=10.0))
limiter = nucleo.RateLimiter("pubchem", max_requests=5, window_seconds=1.0)


@nucleo.tool(limiters=[limiter])
@nucleo.llm_errors
def search_compounds(name: str) -> list[dict[str, Any]]:
    """Compound ids whose name matches; an empty list when none does."""
    if not name.strip():
        raise nucleo.InvalidInputException("name", name, "must name a compound, such as aspirin")
    found = pubchem.get_json(f"/compound/name/{quote(name)}/cids/JSON", empty_on_404=True)
    if found is None:
        return []  # PubChem says 404 when a name matches nothing: a valid, empty answer
    return [{"cid": cid} for cid in found["IdentifierList"]["CID"]]


@nucleo.tool(limiters=[limiter])
@nucleo.llm_errors
def fetch_compound(cid: int) -> dict[str, Any]:
    """The formula and weight of one compound, by its PubChem id."""
    if isinstance(cid, bool) or not isinstance(cid, int) or cid < 1:
        raise nucleo.InvalidInputException(
            "cid", cid, "must be a positive whole number, such as 2244"
        )
    with nucleo.service_call("PubChem", "cid", cid, "compound fetch"):
        data = pubchem.get_json(
            f"/compound/cid/{cid}/property/MolecularFormula,MolecularWeight/JSON"
        )
    properties = data["PropertyTable"]["Properties"][0]
    return {
        "cid": cid,
        "formula": properties["MolecularFormula"],
        "weight": float(properties["MolecularWeight"]),
    }
