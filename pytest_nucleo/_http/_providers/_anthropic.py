"""The anthropic SDK's errors (see ``_sdk_api``)."""

from __future__ import annotations

import anthropic

from ._sdk_api import SdkApi

_api = SdkApi(anthropic, "Anthropic", "anthropic-organization-id")
provider_answer = _api.provider_answer
sdk_retries = _api.sdk_retries
