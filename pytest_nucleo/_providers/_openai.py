"""The openai SDK's errors (see ``_sdk_api``)."""

from __future__ import annotations

import openai

from ._sdk_api import SdkApi

provider_answer = SdkApi(openai, "OpenAI", "openai-organization").provider_answer
