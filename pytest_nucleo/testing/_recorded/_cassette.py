"""VCR.py cassettes (format version 1, YAML or JSON) read into recorded exchanges.

A small reader of the documented format rather than vcrpy's own loader: loading through vcrpy
imports its whole patching machinery and reports a bad cassette without saying which entry is
bad, while the format is a short, stable document. YAML needs PyYAML (the ``recorded`` extra),
imported only when a YAML cassette is read; the few Python tags vcrpy writes (``!!python/str``,
``!!python/tuple``, a ``BytesIO`` request body) are understood, no other object tag is.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from io import BytesIO
from pathlib import Path
from typing import Any

from ._recording import RecordedExchange, RecordingError

SUFFIXES = (".yaml", ".yml", ".json")
FORMAT_VERSION = 1
_RERECORD = "delete it and record it again with a current vcrpy"


def claims(path: Path, text: str) -> bool:
    return path.suffix.lower() in SUFFIXES


def read(path: Path, text: str) -> list[RecordedExchange | RecordingError]:
    document = _load_json(path, text) if path.suffix.lower() == ".json" else _load_yaml(path, text)
    if isinstance(document, list):
        raise RecordingError(
            path, None, f"is a cassette of a vcrpy older than 1.0 (no format version): {_RERECORD}"
        )
    if not isinstance(document, Mapping) or "interactions" not in document:
        raise RecordingError(
            path, None, 'is not a VCR.py cassette: it has no top-level "interactions" list'
        )
    version = document.get("version")
    if version != FORMAT_VERSION:
        raise RecordingError(
            path,
            None,
            f"is a cassette of format version {version!r}, and this reader knows version "
            f"{FORMAT_VERSION} (vcrpy 1.0 and later): {_RERECORD}",
        )
    interactions = document["interactions"]
    if not isinstance(interactions, list):
        raise RecordingError(path, None, '"interactions" is not a list')
    entries: list[RecordedExchange | RecordingError] = []
    for number, interaction in enumerate(interactions, start=1):
        try:
            entries.append(_exchange(path, number, interaction))
        except RecordingError as error:
            entries.append(error)
    return entries


def _load_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise RecordingError(path, None, f"is not valid JSON ({error})") from None


def _load_yaml(path: Path, text: str) -> Any:
    try:
        import yaml  # type: ignore[import-untyped]  # no stubs: the calls below are few
    except ImportError:
        raise RecordingError(
            path,
            None,
            "is a YAML cassette, and reading YAML needs PyYAML: "
            "pip install 'pytest-nucleo[recorded]'",
        ) from None

    class Loader(yaml.SafeLoader):  # type: ignore[misc]
        """Safe, plus the harmless tags vcrpy writes."""

    def plain(loader: yaml.SafeLoader, node: Any) -> Any:
        return loader.construct_scalar(node)

    def sequence(loader: yaml.SafeLoader, node: Any) -> Any:
        return tuple(loader.construct_sequence(node))

    def buffer(loader: yaml.SafeLoader, node: Any) -> Any:
        state = loader.construct_mapping(node, deep=True).get("state") or (b"",)
        return BytesIO(state[0] if isinstance(state[0], bytes) else str(state[0]).encode())

    for tag, build in (
        ("python/str", plain),
        ("python/unicode", plain),
        ("python/tuple", sequence),
        ("python/object/new:_io.BytesIO", buffer),
    ):
        Loader.add_constructor(f"tag:yaml.org,2002:{tag}", build)
    try:
        return yaml.load(text, Loader=Loader)  # a safe loader, plus the tags above
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise RecordingError(
            path, None, f"is not valid YAML{where}: {error.problem or error.context}"
        ) from None
    except yaml.YAMLError as error:
        raise RecordingError(path, None, f"is not valid YAML ({error})") from None


def _exchange(path: Path, number: int, interaction: Any) -> RecordedExchange:
    def bad(problem: str) -> RecordingError:
        return RecordingError(path, number, problem)

    if not isinstance(interaction, Mapping):
        raise bad("is not a mapping with a request and a response")
    request, response = interaction.get("request"), interaction.get("response")
    if not isinstance(request, Mapping) or not isinstance(response, Mapping):
        raise bad("needs a request and a response, each a mapping")
    method, uri = request.get("method"), request.get("uri")
    if not isinstance(method, str) or not isinstance(uri, str) or not uri:
        raise bad("its request needs a method and a uri, as strings")
    if "status_code" in response:  # what vcrpy's httpx support wrote before the common shape
        status: Any = response["status_code"]
        raw_body: Any = response.get("content")
    else:
        status = response.get("status")
        status = status.get("code") if isinstance(status, Mapping) else None
        body = response.get("body")
        raw_body = body.get("string") if isinstance(body, Mapping) else body
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise bad(f"its response has no valid status code (got {status!r})")
    headers = _headers(response.get("headers"), bad, "response")
    return RecordedExchange(
        source=str(path),
        entry=number,
        method=method.upper(),
        url=uri,
        request_headers=_headers(request.get("headers"), bad, "request"),
        request_body=_bytes(request.get("body"), bad, "request"),
        status=status,
        headers=tuple((n, v) for n, v in headers if n.lower() != "content-encoding"),
        body=_decompressed(_bytes(raw_body, bad, "response"), headers, bad),
    )


def _headers(raw: Any, bad: Any, which: str) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise bad(f"its {which} headers are not a mapping of names to lists of values")
    pairs = []
    for name, values in raw.items():
        for value in values if isinstance(values, list | tuple) else [values]:
            if value is None:  # a header a filter_headers setting removed
                continue
            if not isinstance(value, str | int):
                raise bad(f"its {which} header {name!r} has a value that is not text")
            pairs.append((str(name), str(value)))
    return tuple(pairs)


def _bytes(raw: Any, bad: Any, which: str) -> bytes:
    if raw is None:
        return b""
    if isinstance(raw, BytesIO):
        return raw.getvalue()
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, str):
        return raw.encode("utf-8", "surrogateescape")
    raise bad(
        f"its {which} body is a {type(raw).__name__}, not text or bytes: a binary body is "
        "written as !!binary in a YAML cassette (a JSON cassette cannot hold one)"
    )


def _decompressed(body: bytes, headers: tuple[tuple[str, str], ...], bad: Any) -> bytes:
    encoding = next((v for n, v in headers if n.lower() == "content-encoding"), "").strip().lower()
    if not body or encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise bad(
            f"its response body is compressed with {encoding!r}, which this reader cannot "
            "undo: record with vcr's decode_compressed_response=True"
        )
    try:
        # wbits 47 reads gzip and zlib streams alike; -15 a raw deflate stream.
        return (
            zlib.decompress(body, 47)
            if encoding == "gzip" or body[:1] == b"\x78"
            else zlib.decompress(body, -15)
        )
    except zlib.error:
        raise bad(
            f"its response body says Content-Encoding {encoding}, but does not decompress"
        ) from None
