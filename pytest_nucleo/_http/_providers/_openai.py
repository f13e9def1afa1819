"""The openai SDK's errors (see ``_sdk_api``)."""

from __future__ import annotations

import openai

from ._sdk_api import SdkApi

_api = SdkApi(openai, "OpenAI", "openai-organization")
provider_answer = _api.provider_answer
sdk_retries = _api.sdk_retries
