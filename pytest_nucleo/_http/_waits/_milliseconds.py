"""``retry-after-ms`` (Azure OpenAI; OpenAI's SDKs read it too) and ``x-ms-retry-after-ms``
(Azure Cosmos DB):
the wait in milliseconds, the more precise copy of a ``Retry-After`` sent beside it.

Azure OpenAI: https://learn.microsoft.com/en-us/azure/ai-foundry/openai/quotas-limits
Cosmos DB: https://learn.microsoft.com/en-us/rest/api/cosmos-db/common-cosmosdb-rest-response-headers
"""

from __future__ import annotations

from ._said import Said

_NAMES = ("retry-after-ms", "x-ms-retry-after-ms")


def wait(said: Said) -> float | None:
    for name in _NAMES:
        millis = said.number(name)
        if millis is not None:
            return millis / 1000.0
    return None
