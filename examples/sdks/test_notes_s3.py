"""The S3-backed note tools keep the whole failure contract with one decorator as hardening."""

from __future__ import annotations

import pytest

pytest.importorskip("boto3", reason="boto3 is not installed: pip install 'pytest-nucleo[aws]'")

from conftest import ACCESS_KEY_ID
from notes_s3 import BUCKET, list_notes, read_note

from pytest_nucleo.testing import ToolContract, respond

ORIGIN = f"https://{BUCKET}.s3.amazonaws.com"


def _listing(*keys: str) -> bytes:
    """A ListObjectsV2 answer as S3 sends it, with ``keys``.
    https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html"""
    contents = "".join(
        f"<Contents><Key>{key}</Key><LastModified>2026-12-07T10:00:00.000Z</LastModified>"
        f'<ETag>"9b2cf535f27731c974343645a3985328"</ETag><Size>14</Size>'
        "<StorageClass>STANDARD</StorageClass></Contents>"
        for key in keys
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        f"<Name>{BUCKET}</Name><Prefix>notes/</Prefix><KeyCount>{len(keys)}</KeyCount>"
        "<MaxKeys>50</MaxKeys><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>"
        f"{contents}</ListBucketResult>"
    ).encode()


class TestReadNote(ToolContract):
    tool = read_note
    kind = "fetch"
    service_name = "Notes"
    endpoint = f"GET {ORIGIN}/notes/2026-12-07.txt"
    valid_call = {"key": "notes/2026-12-07.txt"}
    valid_response = respond(200, content=b"Call the shop.", headers={"content-type": "text/plain"})
    secrets = (ACCESS_KEY_ID,)
    not_applicable = {
        "not-json-2xx": "a note is plain text: any 200 body is the note",
    }


class TestListNotes(ToolContract):
    tool = list_notes
    kind = "search"
    service_name = "Notes"
    endpoint = f"GET {ORIGIN}/?list-type=2&prefix=notes%2F&max-keys=50&encoding-type=url"
    valid_call = {"prefix": "notes/"}
    valid_response = respond(
        200, content=_listing("notes/2026-12-07.txt"), headers={"content-type": "application/xml"}
    )
    empty_response = respond(200, content=_listing(), headers={"content-type": "application/xml"})
    secrets = (ACCESS_KEY_ID,)
    not_applicable = {
        "status-404": "no match is a 200 listing; a 404 is a missing bucket",
    }
