"""Reading the errors of the SDKs generated from one template (openai, anthropic).

Both raise an ``APIStatusError`` holding the received response, an ``APIConnectionError`` for
a call that got none, and its subclass ``APITimeoutError``. Only the response (its status,
headers and JSON error body) is read, never the exception's message: that message quotes the
body as the SDK received it, unmasked.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

from pytest_nucleo._http._clients import read_response
from pytest_nucleo._http._waits import stated_wait
from pytest_nucleo._text._values import text

from . import ProviderAnswer

_BODY_SCAN = 65_536


def _json(content: bytes) -> Any:
    if not content or len(content) > _BODY_SCAN:
        return None
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None


class SdkApi:
    """Reads the errors of ``sdk`` for the provider named ``provider``."""

    def __init__(self, sdk: ModuleType, provider: str, account_header: str) -> None:
        self.sdk = sdk
        self.provider = provider
        self.account_header = account_header

    def _is(self, exc: BaseException, name: str) -> bool:
        """Whether ``exc`` is the SDK's class ``name``; False when the SDK has no such class
        (openai 0.28 has no ``APIStatusError``; a test double may have none of them)."""
        kind = getattr(self.sdk, name, None)
        return isinstance(kind, type) and issubclass(type(exc), kind)

    def provider_answer(self, exc: BaseException) -> ProviderAnswer | None:
        if self._is(exc, "APIStatusError"):
            return self._status_answer(exc)
        if self._is(exc, "APIConnectionError"):
            model = self._model(getattr(exc, "request", None))
            return ProviderAnswer(
                self.provider, None, self._is(exc, "APITimeoutError"), model=model
            )
        return None

    @staticmethod
    def sdk_retries(exc: BaseException) -> int:
        """How many times the SDK retried before raising ``exc``: the count it sends with every
        request (``x-stainless-retry-count``), read from the last one."""
        headers = getattr(getattr(exc, "request", None), "headers", None)
        value = headers.get("x-stainless-retry-count") if headers is not None else None
        return int(value) if isinstance(value, str) and value.isascii() and value.isdigit() else 0

    def _status_answer(self, exc: Any) -> ProviderAnswer:
        response = exc.response
        request = getattr(exc, "request", None)
        try:
            view = read_response(response)
        except ValueError:  # a streamed answer the SDK did not read: sort it by its status
            view = None
        known = view.known if view is not None else ()
        model = self._model(request)
        doc = _json(view.body if view is not None else b"")
        error = doc.get("error", doc) if isinstance(doc, dict) else None
        if not isinstance(error, dict):
            error = {}
        headers = response.headers
        # Every dialect a service uses to say "wait" (the retry-after-ms the SDKs read among them).
        retry_after = stated_wait(
            headers, view.body if view is not None else None, status=int(exc.status_code)
        )
        return ProviderAnswer(
            self.provider,
            int(exc.status_code),
            code=text(error.get("code")),
            type=text(error.get("type")),
            message=text(error.get("message")),
            retry_after=retry_after,
            model=model,
            account=headers.get(self.account_header) or None,
            # The model's name may show: the texts name it on purpose.
            known=tuple(value for value in known if value != model),
        )

    @staticmethod
    def _model(request: Any) -> str | None:
        """The ``model`` of the request's JSON body, when it has one."""
        try:
            content = request.content if request is not None else b""
        except Exception:  # a streamed body, not readable without consuming it
            return None
        doc = _json(content if isinstance(content, bytes) else b"")
        model = doc.get("model") if isinstance(doc, dict) else None
        return model if isinstance(model, str) and model else None
