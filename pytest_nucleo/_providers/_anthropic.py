"""The anthropic SDK's errors (see ``_sdk_api``)."""

from __future__ import annotations

import anthropic

from ._sdk_api import SdkApi

provider_answer = SdkApi(anthropic, "Anthropic", "anthropic-organization-id").provider_answer
