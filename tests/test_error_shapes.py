"""The message and the fields at fault of JSON error bodies, read by their shape.

Each body is shaped as its vendor or its specification documents it (the page is cited above
each test). A body goes through ``body_excerpt`` first, as every body does before it is quoted.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pytest_nucleo as nucleo
from pytest_nucleo._text._excerpt import body_excerpt
from pytest_nucleo._text._quote import Quote, quote_of, said_of
from pytest_nucleo._text._secrets import MASK, redact
from pytest_nucleo._text._shapes import (
    FIELD_LIMIT,
    FIELDS_KEPT,
    best_message,
    error_fields,
    read,
    read_body,
)

BUDGET = 300


def excerpt_of(body: object) -> str:
    return body_excerpt(json.dumps(body, indent=2).encode(), content_type="application/json")


def quoted(body: object) -> Quote:
    excerpt = excerpt_of(body)
    return quote_of(excerpt, len(excerpt), BUDGET)


# --- a top-level message: read as before ------------------------------------------------------


def test_a_top_level_message_reads_as_before() -> None:
    # OAuth 2.0's error response (RFC 6749, section 5.2,
    # https://www.rfc-editor.org/rfc/rfc6749#section-5.2): "error" is a code beside its
    # description, which is the message.
    body = {
        "error": "invalid_grant",
        "error_description": "The provided authorization grant is invalid, expired or revoked.",
    }
    assert quoted(body) == Quote(
        words="The provided authorization grant is invalid, expired or revoked."
    )
    # No error shape: left to the message keys, found anywhere, as before (JSend's "fail").
    said = "Order 00000042 is not in any of our stores, nor in the archive of past orders"
    nested = {"status": "fail", "data": {"message": said}}
    assert best_message(nested) is None
    assert quoted(nested).words == said
    # An empty list of errors is no shape either.
    assert best_message({"title": "Weekly report", "errors": [], "data": {"message": said}}) is None


def test_an_error_string_alone_is_the_message() -> None:
    # OAuth 2.0 bearer tokens (RFC 6750, section 3.1): a bare "error" string.
    body = {"error": "invalid_token", "padding": "x" * 90}
    assert quoted(body).words == "invalid_token"


# --- "error" as an object ------------------------------------------------------------------------


def test_google_error_object() -> None:
    # https://cloud.google.com/apis/design/errors (AIP-193): the message, a status, and typed
    # details; the LocalizedMessage repeats the message in other words and is not quoted.
    message = (
        "The zone 'us-east1-a' does not have enough resources available to fulfill the "
        "request. Try a different zone, or try again later."
    )
    body = {
        "error": {
            "code": 429,
            "message": message,
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "RESOURCE_AVAILABILITY",
                    "domain": "compute.googleapis.com",
                    "metadata": {"zone": "us-east1-a", "vmType": "e2-medium"},
                },
                {
                    "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
                    "locale": "en-US",
                    "message": "An <e2-medium> VM instance is currently unavailable in the "
                    "<us-east1-a> zone.",
                },
            ],
        }
    }
    assert quoted(body) == Quote(words=message)


def test_google_bad_request_field_violations() -> None:
    # https://cloud.google.com/apis/design/errors: a BadRequest detail names each field at
    # fault and says what is wrong with it.
    body = {
        "error": {
            "code": 400,
            "message": "Invalid value at 'contact.email_addresses[0].value'.",
            "status": "INVALID_ARGUMENT",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [
                        {
                            "field": "contact.email_addresses[0].value",
                            "description": "Invalid email address: no @ sign.",
                        }
                    ],
                }
            ],
        }
    }
    assert quoted(body) == Quote(
        words="Invalid value at 'contact.email_addresses[0].value'. "
        "contact.email_addresses[0].value: Invalid email address: no @ sign.",
        fields=("contact.email_addresses[0].value",),
    )


def test_youtube_quota_message_loses_its_html() -> None:
    # https://developers.google.com/youtube/v3/docs/errors: the message links to the quota
    # page; Google's older "errors" list repeats it with a reason.
    message = (
        "The request cannot be completed because you have exceeded your "
        '<a href="/youtube/v3/getting-started#quota">quota</a>.'
    )
    body = {
        "error": {
            "code": 403,
            "message": message,
            "errors": [{"message": message, "domain": "youtube.quota", "reason": "quotaExceeded"}],
        }
    }
    words = "The request cannot be completed because you have exceeded your quota."
    assert quoted(body) == Quote(words=words)
    # Cut, the body is read by its keys: the markup goes all the same.
    cut = body_excerpt(json.dumps({**body, "padding": "x" * 5000}).encode())
    assert "not shown" in cut
    assert quote_of(cut, 5200, BUDGET).words == words


def test_stripe_error_object_names_its_param() -> None:
    # https://docs.stripe.com/api/errors: "param" is the parameter the error relates to.
    body = {
        "error": {
            "code": "parameter_missing",
            "doc_url": "https://stripe.com/docs/error-codes/parameter-missing",
            "message": "Missing required param: amount.",
            "param": "amount",
            "type": "invalid_request_error",
        }
    }
    assert quoted(body) == Quote(
        words="amount: Missing required param: amount.", fields=("amount",)
    )


def test_html_in_a_short_body_is_not_quoted_whole() -> None:
    body = '{"message": "Tom &amp; Jerry <b>not</b> found"}'
    assert quote_of(body, len(body), BUDGET).words == "Tom & Jerry not found"


# --- "errors" ----------------------------------------------------------------------------------


def test_shopify_errors_string() -> None:
    # https://shopify.dev/docs/api/usage/response-codes (429 Too Many Requests).
    body = {
        "errors": "Exceeded 2 calls per second for api client. Reduce request rates to resume "
        "uninterrupted service."
    }
    assert quoted(body) == Quote(words=body["errors"])


def test_shopify_errors_by_field() -> None:
    # https://shopify.dev/docs/api/usage/response-codes (422 Unprocessable Entity): a map
    # from field to its messages. Short, the body is quoted whole; its field is read.
    body = {"errors": {"title": ["can't be blank"]}}
    assert error_fields(excerpt_of(body)) == ("title",)
    assert best_message(body) == "title: can't be blank"
    longer = {"errors": {"title": ["can't be blank", "is too short"], "base": ["Invalid"]}}
    assert read(longer).message == "title: can't be blank, is too short; Invalid"
    assert read(longer).fields == ("title",)  # Rails' "base" is the record, not a field


def test_github_validation_failed_names_the_field() -> None:
    # https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api
    # ("Validation failed"): each error names its resource, field and code.
    body = {
        "message": "Validation Failed",
        "errors": [{"resource": "Issue", "field": "title", "code": "missing_field"}],
        "documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue",
    }
    assert quoted(body) == Quote(
        words="Validation Failed: title (missing_field)", fields=("title",)
    )


def test_github_errors_as_strings() -> None:
    # The same page: "errors" may be a list of strings (the "validation-error-simple" schema).
    body = {
        "message": "Validation Failed",
        "errors": ["Only 100 labels can be added to an issue at a time."],
        "documentation_url": "https://docs.github.com/rest/issues/labels#add-labels-to-an-issue",
    }
    assert quoted(body).words == (
        "Validation Failed: Only 100 labels can be added to an issue at a time."
    )


def test_sendgrid_errors_with_fields() -> None:
    # https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/responses
    body = {
        "errors": [
            {
                "message": "The from address does not match a verified Sender Identity.",
                "field": "from.email",
                "help": None,
            }
        ]
    }
    assert quoted(body) == Quote(
        words="from.email: The from address does not match a verified Sender Identity.",
        fields=("from.email",),
    )


def test_json_api_errors_with_pointers() -> None:
    # https://jsonapi.org/examples/#error-objects ("Multiple errors"): "detail" says more than
    # "title"; the pointer names the attribute.
    body = {
        "jsonapi": {"version": "1.1"},
        "errors": [
            {
                "code": "123",
                "source": {"pointer": "/data/attributes/firstName"},
                "title": "Value is too short",
                "detail": "First name must contain at least two characters.",
            },
            {
                "code": "225",
                "source": {"pointer": "/data/attributes/password"},
                "title": "Passwords must contain a letter, number, and punctuation character.",
                "detail": "The password provided is missing a punctuation character.",
            },
            {
                "code": "226",
                "source": {"pointer": "/data/attributes/password"},
                "title": "Password and password confirmation do not match.",
            },
        ],
    }
    quote = quoted(body)
    assert quote.fields == ("firstName", "password")
    # "password: The ..." would read as a credential and its value, to the masking too: the
    # field is named with a dash instead.
    assert quote.words == (
        "firstName: First name must contain at least two characters; password - The password "
        "provided is missing a punctuation character; password - Password and password "
        "confirmation do not match."
    )
    assert redact(quote.words) == quote.words


def test_json_api_error_with_a_query_parameter() -> None:
    # https://jsonapi.org/format/#error-objects: "source.parameter" names a query parameter;
    # https://jsonapi.org/examples/#error-objects-invalid-query-parameters.
    body = {
        "errors": [
            {
                "source": {"parameter": "include"},
                "title": "Invalid Query Parameter",
                "detail": "The resource does not have an `auther` relationship path.",
            }
        ]
    }
    assert quoted(body) == Quote(
        words="include: The resource does not have an `auther` relationship path.",
        fields=("include",),
    )
    # A pointer to the whole resource, or to the document, names no field.
    whole = {"errors": [{"source": {"pointer": "/data"}, "detail": "Missing `data` member."}]}
    assert read(whole) == read_body(json.dumps(whole))
    assert read(whole).fields == ()


def test_discord_nested_field_errors() -> None:
    # https://discord.com/developers/docs/reference#error-messages ("Array Error"): errors
    # keyed by the path to the field, a list's index included, each field's under "_errors".
    body = {
        "code": 50035,
        "message": "Invalid Form Body",
        "errors": {
            "activities": {
                "0": {
                    "platform": {
                        "_errors": [
                            {
                                "code": "BASE_TYPE_CHOICES",
                                "message": "Value must be one of {'desktop', 'android', 'ios'}.",
                            }
                        ]
                    },
                    "type": {
                        "_errors": [
                            {
                                "code": "BASE_TYPE_CHOICES",
                                "message": "Value must be one of (0, 1, 2, 3, 4, 5).",
                            }
                        ]
                    },
                }
            }
        },
    }
    assert quoted(body) == Quote(
        words="Invalid Form Body: activities[0].platform: Value must be one of {'desktop', "
        "'android', 'ios'}; activities[0].type: Value must be one of (0, 1, 2, 3, 4, 5).",
        fields=("activities[0].platform", "activities[0].type"),
    )


def test_a_headline_ending_in_a_credential_name_is_not_joined_with_a_colon() -> None:
    shape = read({"message": "Missing access_token", "errors": [{"field": "scope", "code": "x"}]})
    assert shape.message == "Missing access_token. scope (x)"


# --- problem details ------------------------------------------------------------------------


def test_rfc_9457_validation_errors() -> None:
    # https://www.rfc-editor.org/rfc/rfc9457#section-3: an "errors" extension, each with a
    # "detail" and a JSON pointer into the request.
    body = {
        "type": "https://example.net/validation-error",
        "title": "Your request is not valid.",
        "errors": [
            {"detail": "must be a positive integer", "pointer": "#/age"},
            {"detail": "must be 'green', 'red' or 'blue'", "pointer": "#/profile/color"},
        ],
    }
    assert quoted(body) == Quote(
        words="Your request is not valid. age: must be a positive integer; profile.color: "
        "must be 'green', 'red' or 'blue'",
        fields=("age", "profile.color"),
    )


def test_rfc_7807_invalid_params() -> None:
    # https://www.rfc-editor.org/rfc/rfc7807#section-3 (the first edition, which RFC 9457
    # obsoletes; services still send it): "invalid-params" with a name and a reason each.
    body = {
        "type": "https://example.net/validation-error",
        "title": "Your request parameters didn't validate.",
        "invalid-params": [
            {"name": "age", "reason": "must be a positive integer"},
            {"name": "color", "reason": "must be 'green', 'red' or 'blue'"},
        ],
    }
    assert quoted(body) == Quote(
        words="Your request parameters didn't validate. age: must be a positive integer; "
        "color: must be 'green', 'red' or 'blue'",
        fields=("age", "color"),
    )


def test_rfc_9457_detail_without_extensions_reads_as_before() -> None:
    # https://www.rfc-editor.org/rfc/rfc9457#section-3: "detail" says more than "title".
    body = {
        "type": "https://example.com/probs/out-of-credit",
        "title": "You do not have enough credit.",
        "detail": "Your current balance is 30, but that costs 50.",
        "instance": "/account/12345/msgs/abc",
        "balance": 30,
    }
    assert quoted(body) == Quote(words="Your current balance is 30, but that costs 50.")


# --- Atlassian, FastAPI ------------------------------------------------------------------------


def test_atlassian_error_collection() -> None:
    # https://developer.atlassian.com/cloud/jira/platform/rest/v3/intro/#status-codes: general
    # messages in "errorMessages", field messages in "errors".
    body = {
        "errorMessages": ["Issue does not exist or you do not have permission to see it."],
        "errors": {},
    }
    assert quoted(body).words == "Issue does not exist or you do not have permission to see it."
    by_field = {
        "errorMessages": [],
        "errors": {
            "summary": "You must specify a summary of the issue.",
            "customfield_10001": "This field is required.",
        },
    }
    assert quoted(by_field) == Quote(
        words="summary: You must specify a summary of the issue; customfield_10001: This "
        "field is required.",
        fields=("summary", "customfield_10001"),
    )


def test_fastapi_validation_detail() -> None:
    # https://fastapi.tiangolo.com/tutorial/handling-errors/: "detail" lists each error with
    # its location ("body", then the field) and message.
    body = {
        "detail": [
            {"type": "missing", "loc": ["body", "name"], "msg": "Field required", "input": {}},
            {
                "type": "int_parsing",
                "loc": ["body", "items", 0, "qty"],
                "msg": "Input should be a valid integer",
                "input": "two",
            },
        ]
    }
    assert quoted(body) == Quote(
        words="name: Field required; items[0].qty: Input should be a valid integer",
        fields=("name", "items[0].qty"),
    )


# --- secrets, bounds, cut bodies ---------------------------------------------------------------


def test_masked_values_stay_masked() -> None:
    key = "sk-" + "a1B2c3D4" * 4
    excerpt = body_excerpt(
        json.dumps({"errors": {"api_key": [key], "note": ["key " + key + " is revoked"]}}).encode()
    )
    assert key not in excerpt
    quote = quote_of(excerpt, len(excerpt), BUDGET)
    assert key not in quote.words
    assert MASK not in "".join(quote.fields)
    # Spelled with an escape, a key the masking of the raw text did not see is masked once
    # decoded.
    escaped = '{"message": "Validation Failed", "errors": ["key sk\\u002d' + key[3:] + ' bad"]}'
    assert key not in quote_of(escaped, len(escaped), BUDGET).words
    assert key not in (read_body(escaped).message or "")
    # A field named by such a key is masked, and so not named at all.
    field = '{"errors": [{"field": "sk\\u002d' + key[3:] + '", "message": "unknown"}]}'
    assert read_body(field) == read_body('{"errors": [{"message": "unknown"}]}')


def test_fields_are_bounded_clean_and_each_named_once() -> None:
    long = "f" * 500
    body = {
        "errors": [
            {"field": "a\x00b\u202ec", "message": "odd"},
            {"field": "title", "message": "blank"},
            {"field": "title", "message": "too short"},
            {"field": long, "message": "long"},
            {"field": MASK, "message": "masked"},
        ],
        "details": [{"field": f"f{i}", "message": "m"} for i in range(20)],
    }
    fields = error_fields(json.dumps(body))
    assert fields[:3] == ("a b c", "title", "f" * (FIELD_LIMIT - 3) + "...")
    assert len(fields) == FIELDS_KEPT
    assert len(set(fields)) == len(fields)
    assert all(len(f) <= FIELD_LIMIT and MASK not in f for f in fields)


def test_a_cut_body_is_read_by_its_keys() -> None:
    # Cut, the excerpt is not JSON: no field is read, and the message comes from its keys.
    body = {
        "message": "Validation Failed",
        "errors": [{"field": f"f{i}", "code": "missing_field"} for i in range(300)],
    }
    excerpt = body_excerpt(json.dumps(body).encode())
    assert "not shown" in excerpt
    assert error_fields(excerpt) == ()
    assert quote_of(excerpt, 12000, BUDGET) == Quote(words="Validation Failed")
    # A control character spelled by a JSON escape, which the excerpt's cleaning of the raw
    # text did not see, is not quoted either.
    bell = body_excerpt(json.dumps({**body, "message": "Validation\u0007 Failed"}).encode())
    assert "\\u0007" in bell
    assert quote_of(bell, 12000, BUDGET).words == "Validation Failed"
    # A cut body with no message key has its shape named, as before.
    shopify = {"errors": {f"field{i}": ["is invalid"] for i in range(400)}}
    excerpt = body_excerpt(json.dumps(shopify).encode())
    assert quote_of(excerpt, 9000, BUDGET).shape == "a JSON body of 8 kB with no message field"


@pytest.mark.parametrize(
    "text",
    ["42", '"a string"', "null", "true", "[]", "{}", "[1, 2]", '{"errors": null}', "{bad json",
     "[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000, "1" * 5000, "[" + "1" * 5000 + "]",
     '{"errors": [' + '{"errors": [' * 400 + "]}" * 400 + "]}"],
)  # fmt: skip
def test_any_text_is_read_without_raising(text: str) -> None:
    assert error_fields(text) == ()
    quote_of(text, len(text), BUDGET)
    said_of(text, len(text), BUDGET)


def test_fields_do_not_change_what_is_said() -> None:
    # said_of and the texts built on it quote the words only.
    body = excerpt_of(
        {
            "message": "Validation Failed",
            "errors": [{"resource": "Issue", "field": "title", "code": "missing_field"}],
        }
    )
    assert said_of(body, len(body), 200) == ' It said: "Validation Failed: title (missing_field)".'


KEYS = st.sampled_from(
    ["message", "detail", "title", "error", "errors", "details", "field", "param", "source",
     "pointer", "parameter", "loc", "fields", "name", "reason", "code", "@type",
     "fieldViolations", "invalid-params", "errorMessages", "location", "locationType", "base"]
)  # fmt: skip
TEXTS = st.text(max_size=30) | st.sampled_from(["parameter", MASK, "<b>x</b>", "&amp;", "/data"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | TEXTS,
    lambda children: (
        st.lists(children, max_size=6)
        | st.dictionaries(KEYS | st.text(max_size=10), children, max_size=6)
    ),
    max_leaves=50,
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


@settings(deadline=None, max_examples=300)
@given(JSON)
def test_any_json_value_is_read_without_raising(value: object) -> None:
    text = json.dumps(value)
    fields = error_fields(text)
    assert len(fields) <= FIELDS_KEPT
    assert len(set(fields)) == len(fields)
    assert all(0 < len(f) <= FIELD_LIMIT and not _CONTROL.search(f) for f in fields)
    quote = quote_of(text, len(text), BUDGET)
    assert quote.fields == fields
    assert not _CONTROL.search(quote.words)
    shape = read(value)
    assert shape.message is None or not _CONTROL.search(shape.message)


def test_markup_the_page_reader_leaves_nothing_of_loses_its_tags_only() -> None:
    # The page reader drops "Error code 1020" as a page's boilerplate; in a message it is the
    # message, so only the tags go.
    body = {"message": "<b>Error code 1020</b>", "errors": ["<i>Access denied</i>"]}
    assert read(body).message == "Error code 1020: Access denied"


def test_a_value_under_a_credentials_name_is_not_quoted() -> None:
    # A one-word message or a code with digits under "password" may be the value, echoed.
    body = (b'{"message": "Validation failed", "errors": {"password": ["hunter2hunter2"], '
            b'"email": ["is invalid"]}, "documentation": "https://example.test/docs/errors"}')  # fmt: skip
    text = nucleo.http_exception("S", "/x", 422, body).explain_to_llm()
    assert "hunter2hunter2" not in text
    assert "email: is invalid" in text
    coded = (
        b'{"errors": [{"field": "password", "code": "hunter2hunter2"}], "hint": "'
        + b"x" * 80
        + b'"}'
    )
    assert "hunter2hunter2" not in nucleo.http_exception("S", "/x", 422, coded).explain_to_llm()


def test_a_plain_value_in_braces_is_still_masked() -> None:
    from pytest_nucleo._text._secrets import redact

    assert "hunter2hunter2" not in redact("password: {hunter2hunter2}")
    assert "abc123def456" not in redact("secret={abc123def456}")
    assert redact('{"access_token": {"_errors": []}}') == '{"access_token": {"_errors": []}}'
