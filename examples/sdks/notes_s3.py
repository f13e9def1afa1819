"""Notes kept in an S3 bucket, read by two tools built on boto3 and hardened by one decorator.

botocore raises its own ``ClientError`` for every failing status, carrying the status, S3's
error code and the headers, and errors of its own for a call that got no answer:
``llm_errors`` reads them all, so the tools map nothing by hand. botocore would retry a
throttle or a 5xx by itself, sleeping between tries and hiding the wait S3 asked for; the
client makes one attempt, so the model (or the runner's retries) decides what comes next.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import boto3
from botocore.config import Config

import pytest_nucleo as nucleo

SERVICE = "Notes"
BUCKET = "acme-notes"

_KEY = re.compile(r"notes/[a-z0-9-]{1,64}\.txt")


@functools.cache
def _s3() -> Any:
    # Credentials come from the environment (or the instance's role), as in production.
    return boto3.client(
        "s3",
        region_name="us-east-1",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=10),
    )


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
def read_note(key: str) -> str:
    """The text of the note stored under ``key``, such as ``notes/2026-12-07.txt``."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise nucleo.InvalidInputException(
            "key", key, "must be a note's key such as 'notes/2026-12-07.txt'"
        )
    body: bytes = _s3().get_object(Bucket=BUCKET, Key=key)["Body"].read()
    return body.decode("utf-8", "replace")


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
def list_notes(prefix: str) -> list[str]:
    """The keys of the notes whose key starts with ``prefix`` (at most 50); an empty list when
    none does."""
    if not isinstance(prefix, str) or not prefix.startswith("notes/"):
        raise nucleo.InvalidInputException("prefix", prefix, "must start with 'notes/'")
    answer = _s3().list_objects_v2(Bucket=BUCKET, Prefix=prefix, MaxKeys=50)
    if answer.get("Name") != BUCKET:
        # botocore reads any 2xx body as a listing: a page that is not S3's XML (a proxy's
        # sign-in page) reads as an empty one, which the model would take for "no notes".
        raise nucleo.ExternalServiceException(SERVICE, "the answer was not the bucket's listing")
    return [str(item["Key"]) for item in answer.get("Contents", [])]
