"""Documented error responses, as the vendors' documentation shows them (part B)."""

from __future__ import annotations

from _documented import NOW, Documented

_JSON = {"Content-Type": "application/json"}
_SLACK_JSON = {"Content-Type": "application/json; charset=utf-8"}

CORPUS_B: tuple[Documented, ...] = (
    # ------------------------------------------------------------------ Slack
    Documented(
        id="slack-conversations-info-channel-not-found",
        service="Slack",
        status=200,
        headers=dict(_SLACK_JSON),
        body='{"ok": false, "error": "channel_not_found"}',
        source="https://docs.slack.dev/reference/methods/conversations.info",
        meaning="ok-false",
        wait=None,
        note=(
            "Web API answers HTTP 200 with ok:false; the method's errors table says "
            "channel_not_found means the value passed for `channel` was invalid "
            "(example body also in slackapi/slack-api-specs)."
        ),
    ),
    Documented(
        id="slack-auth-test-invalid-auth",
        service="Slack",
        status=200,
        headers=dict(_SLACK_JSON),
        body='{"ok": false, "error": "invalid_auth"}',
        source="https://docs.slack.dev/reference/methods/auth.test",
        meaning="ok-false",
        wait=None,
        note="HTTP 200 with ok:false; invalid_auth means the token is not valid (the user must fix it).",
    ),
    Documented(
        id="slack-admin-apps-requests-list-missing-scope",
        service="Slack",
        status=200,
        headers=dict(_SLACK_JSON),
        body=(
            '{"ok": false, "error": "missing_scope", "needed": "admin.apps:read", '
            '"provided": "read,client,admin,identify,post,apps"}'
        ),
        source="https://docs.slack.dev/reference/methods/admin.apps.requests.list",
        meaning="ok-false",
        wait=None,
        note="HTTP 200 with ok:false; missing_scope names the scope needed and the scopes the token has.",
    ),
    Documented(
        id="slack-views-push-invalid-arguments",
        service="Slack",
        status=200,
        headers=dict(_SLACK_JSON),
        body=(
            '{"ok": false, "error": "invalid_arguments", '
            '"response_metadata": {"messages": ["missing required field: title"]}}'
        ),
        source="https://docs.slack.dev/reference/methods/views.push",
        meaning="ok-false",
        wait=None,
        note="HTTP 200 with ok:false; response_metadata.messages says which argument is wrong (`title`).",
    ),
    Documented(
        id="slack-web-api-ratelimited-429",
        service="Slack",
        status=429,
        headers={**_SLACK_JSON, "Retry-After": "30"},
        body='{"ok": false, "error": "ratelimited"}',
        source="https://docs.slack.dev/apis/web-api/rate-limits",
        meaning="wait",
        wait=30.0,
        note=(
            "Docs: HTTP 429 with a Retry-After header holding the seconds until you can retry; "
            "body is the ok:false shape with the `ratelimited` code from the methods' errors tables; 30 filled."
        ),
    ),
    # ----------------------------------------------------------------- Twilio
    Documented(
        id="twilio-21211-invalid-to-number",
        service="Twilio",
        status=400,
        headers=dict(_JSON),
        body=(
            '{"code": 21211, "message": "The \'To\' number +15005550001 is not a valid phone number.", '
            '"more_info": "https://www.twilio.com/docs/errors/21211", "status": 400}'
        ),
        source="https://www.twilio.com/docs/api/errors/21211",
        meaning="invalid",
        wait=None,
        fields=("To",),
        note=(
            "Error JSON code/message/more_info/status as on https://www.twilio.com/docs/usage/twilios-response; "
            "the number is Twilio's documented invalid test number, message filled for 21211."
        ),
    ),
    Documented(
        id="twilio-20429-too-many-requests",
        service="Twilio",
        status=429,
        headers=dict(_JSON),
        body=(
            '{"code": 20429, "message": "Too Many Requests", '
            '"more_info": "https://www.twilio.com/docs/errors/20429", "status": 429}'
        ),
        source="https://www.twilio.com/docs/api/errors/20429",
        meaning="wait",
        wait=None,
        note=(
            "Docs: too many concurrent REST requests; a 429 is never processed and is always safe to retry "
            "after backing off; no wait stated. Message filled from the error's title."
        ),
    ),
    Documented(
        id="twilio-bulk-messaging-20429-retry-after",
        service="Twilio",
        status=429,
        headers={**_JSON, "Retry-After": "10"},
        body=(
            '{"errors": [{"code": 20429, "message": "Too many requests. Please retry according to the '
            'Retry-After response header.", "infoUrl": "https://www.twilio.com/docs/api/errors/20429", '
            '"context": "null"}]}'
        ),
        source="https://www.twilio.com/docs/bulk-messaging/api/seek-message-resource",
        meaning="wait",
        wait=10.0,
        note=(
            "Newer Twilio product APIs answer with an errors[] list and say to retry according to "
            "Retry-After; body as on the page, Retry-After value 10 filled."
        ),
    ),
    # ---------------------------------------------------------------- Shopify
    Documented(
        id="shopify-rest-429",
        service="Shopify",
        status=429,
        headers={**_JSON, "X-Shopify-Shop-Api-Call-Limit": "40/40", "Retry-After": "2.0"},
        body=(
            '{"errors": "Exceeded 2 calls per second for api client. '
            'Reduce request rates to resume uninterrupted service."}'
        ),
        source="https://shopify.dev/docs/api/admin-rest",
        meaning="wait",
        wait=2.0,
        note=(
            "Docs: past 40 requests/app/store/minute the API returns 429 with Retry-After in seconds "
            "(decimal, 2.0 in the page's header example) and this sample error body."
        ),
    ),
    Documented(
        id="shopify-rest-422-title-blank",
        service="Shopify",
        status=422,
        headers=dict(_JSON),
        body='{"errors": {"title": ["can\'t be blank"]}}',
        source="https://shopify.dev/docs/api/admin-rest/latest/resources/page",
        meaning="invalid",
        wait=None,
        fields=("title",),
        note="Page resource example: creating a page without a title returns 422 with errors keyed by field.",
    ),
    Documented(
        id="shopify-rest-402-payment-required",
        service="Shopify",
        status=402,
        headers=dict(_JSON),
        body='{"errors": "This shop\'s plan does not have access to this feature"}',
        source="https://shopify.dev/docs/api/admin-rest",
        meaning="quota",
        wait=None,
        note=(
            "Docs: 402 means the shop is frozen and the owner must pay the outstanding balance "
            "(sample body is the plan-feature one the same page shows); only the merchant can act."
        ),
    ),
    Documented(
        id="shopify-rest-401-invalid-token",
        service="Shopify",
        status=401,
        headers=dict(_JSON),
        body='{"errors": "[API] Invalid API key or access token (unrecognized login or wrong password)"}',
        source="https://shopify.dev/docs/api/admin-rest",
        meaning="credentials",
        wait=None,
        note="Docs: the client doesn't have correct authentication credentials; sample body from the page.",
    ),
    Documented(
        id="shopify-rest-404-not-found",
        service="Shopify",
        status=404,
        headers=dict(_JSON),
        body='{"errors": "Not Found"}',
        source="https://shopify.dev/docs/api/admin-rest",
        meaning="not-found",
        wait=None,
        note="Docs: the requested resource was not found but could be available again in the future.",
    ),
    # ------------------------------------------------------------------- NCBI
    Documented(
        id="ncbi-eutils-429-rate-limit",
        service="NCBI E-utilities",
        status=429,
        headers=dict(_JSON),
        body='{"error":"API rate limit exceeded","api-key":"203.0.113.7","count":"4","limit":"3"}',
        source="https://support.nlm.nih.gov/kbArticle/?pn=KA-05510",
        meaning="wait",
        wait=None,
        note=(
            "NCBI documents only the 429 (3 rps, 10 with a key) and 'an error message'; the JSON body is "
            "NOT printed on an NCBI page: it is the form client projects record (api-key echoes the caller IP)."
        ),
    ),
    # ----------------------------------------------------------------- Notion
    Documented(
        id="notion-429-rate-limited",
        service="Notion",
        status=429,
        headers={**_SLACK_JSON, "Retry-After": "30"},
        body=(
            '{"object": "error", "status": 429, "code": "rate_limited", '
            '"message": "This request exceeds the number of requests allowed. Slow down and try again."}'
        ),
        source="https://developers.notion.com/reference/request-limits",
        meaning="wait",
        wait=30.0,
        note=(
            "Docs: rate_limited with HTTP 429; respect Retry-After, an integer number of seconds (at most 60 "
            "for the per-connection limit); 30 filled, message taken from the status-codes description."
        ),
    ),
    Documented(
        id="notion-400-validation-error",
        service="Notion",
        status=400,
        headers=dict(_SLACK_JSON),
        body=(
            '{"object": "error", "status": 400, "code": "validation_error", '
            '"message": "body failed validation: body.properties should be defined, instead was undefined."}'
        ),
        source="https://developers.notion.com/reference/status-codes",
        meaning="invalid",
        wait=None,
        fields=("properties",),
        note="Message is the status-codes page's example for validation_error (body does not match the schema).",
    ),
    Documented(
        id="notion-404-object-not-found",
        service="Notion",
        status=404,
        headers=dict(_SLACK_JSON),
        body=(
            '{"object": "error", "status": 404, "code": "object_not_found", '
            '"message": "Could not find database with ID: a1d8501e-1ac1-43e9-a6bd-ea9fe6c8822c. '
            'Make sure the relevant pages and databases are shared with your integration."}'
        ),
        source="https://developers.notion.com/reference/status-codes",
        meaning="not-found",
        wait=None,
        note=(
            "Docs: the resource does not exist or has not been shared with the integration; "
            "message text filled as client fixtures record it."
        ),
    ),
    Documented(
        id="notion-504-gateway-timeout",
        service="Notion",
        status=504,
        headers=dict(_SLACK_JSON),
        body=(
            '{"object": "error", "status": 504, "code": "gateway_timeout", '
            '"message": "Notion timed out while attempting to complete this request. Please try again later."}'
        ),
        source="https://developers.notion.com/reference/status-codes",
        meaning="timeout-may-have-acted",
        wait=None,
        note="Docs: gateway_timeout, Notion timed out completing the request; message is the table's description.",
    ),
    Documented(
        id="notion-529-service-overload",
        service="Notion",
        status=529,
        headers={**_SLACK_JSON, "Retry-After": "10"},
        body=(
            '{"object": "error", "status": 529, "code": "service_overload", '
            '"message": "Notion is overloaded. Try again later."}'
        ),
        source="https://developers.notion.com/reference/request-limits",
        meaning="overloaded",
        wait=10.0,
        note=(
            "Docs: handle 429 and 529 and respect Retry-After; a 529 carries the service_overload code. "
            "Message and the value 10 filled."
        ),
    ),
    # ------------------------------------------------------------ Jira Cloud
    Documented(
        id="jira-cloud-429-burst",
        service="Jira Cloud",
        status=429,
        headers={
            "Date": NOW,
            "Retry-After": "120",
            "X-RateLimit-Reset": "2026-12-07T12:02Z",
            "X-RateLimit-Limit": "100",
            "X-RateLimit-Remaining": "0",
            "RateLimit-Reason": "jira-burst-based",
        },
        body="",
        source="https://developer.atlassian.com/cloud/jira/platform/rate-limiting/",
        meaning="wait",
        wait=120.0,
        note=(
            "Docs: Retry-After is the seconds to wait; X-RateLimit-Reset is an ISO 8601 yyyy-MM-ddTHH:mmZ "
            "timestamp = request time + Retry-After; no body documented; limit value 100 filled."
        ),
    ),
    Documented(
        id="jira-cloud-400-error-collection",
        service="Jira Cloud",
        status=400,
        headers=dict(_SLACK_JSON),
        body=(
            '{"errorMessages": [], "errors": {"projectKey": "Project keys must start with an uppercase '
            'letter, followed by one or more uppercase alphanumeric characters."}}'
        ),
        source=(
            "https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-projects/"
            "#api-rest-api-3-project-post"
        ),
        meaning="invalid",
        wait=None,
        fields=("projectKey",),
        note="ErrorCollection shape (errorMessages list + errors by parameter) with the schema's own example text.",
    ),
    # ---------------------------------------------------------------- Discord
    Documented(
        id="discord-429-user-rate-limit",
        service="Discord",
        status=429,
        headers={
            **_JSON,
            "Date": NOW,
            "Retry-After": "65",
            "X-RateLimit-Limit": "10",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": "1796644864.57",
            "X-RateLimit-Reset-After": "64.57",
            "X-RateLimit-Bucket": "abcd1234",
            "X-RateLimit-Scope": "user",
        },
        body='{"message": "You are being rate limited.", "retry_after": 64.57, "global": false}',
        source="https://discord.com/developers/docs/topics/rate-limits",
        meaning="wait",
        wait=64.57,
        note=(
            "Docs: rely on Retry-After (whole seconds, 65) or the body's retry_after (float seconds, 64.57); "
            "wait uses the precise body value; X-RateLimit-Reset set to NOW_EPOCH + 64.57."
        ),
    ),
    Documented(
        id="discord-429-shared-resource",
        service="Discord",
        status=429,
        headers={
            **_JSON,
            "Date": NOW,
            "Retry-After": "1337",
            "X-RateLimit-Limit": "10",
            "X-RateLimit-Remaining": "9",
            "X-RateLimit-Reset": "1796644864.57",
            "X-RateLimit-Reset-After": "64.57",
            "X-RateLimit-Bucket": "abcd1234",
            "X-RateLimit-Scope": "shared",
        },
        body='{"message": "The resource is being rate limited.", "retry_after": 1336.57, "global": false}',
        source="https://discord.com/developers/docs/topics/rate-limits",
        meaning="wait",
        wait=1336.57,
        note=(
            "Docs' shared (per-resource) example: Retry-After 1337 / retry_after 1336.57 govern this request, "
            "while the bucket headers (Reset-After 64.57, 9 remaining) describe the caller's own bucket."
        ),
    ),
    Documented(
        id="discord-429-global",
        service="Discord",
        status=429,
        headers={
            **_JSON,
            "Retry-After": "65",
            "X-RateLimit-Global": "true",
            "X-RateLimit-Scope": "global",
        },
        body='{"message": "You are being rate limited.", "retry_after": 64.57, "global": true}',
        source="https://discord.com/developers/docs/topics/rate-limits",
        meaning="wait",
        wait=64.57,
        note="Docs' global-limit example; Retry-After 65 and retry_after 64.57 agree, wait uses the float.",
    ),
    Documented(
        id="discord-400-invalid-form-body",
        service="Discord",
        status=400,
        headers=dict(_JSON),
        body=(
            '{"code": 50035, "errors": {"access_token": {"_errors": [{"code": "BASE_TYPE_REQUIRED", '
            '"message": "This field is required"}]}}, "message": "Invalid Form Body"}'
        ),
        source="https://discord.com/developers/docs/reference#error-messages",
        meaning="invalid",
        wait=None,
        fields=("access_token",),
        note="Docs' 'Object Error' example: errors keyed by the JSON key at fault, each with _errors codes.",
    ),
    Documented(
        id="discord-401-invalid-token",
        service="Discord",
        status=401,
        headers=dict(_JSON),
        body='{"message": "Invalid authentication token", "code": 50014}',
        source="https://discord.com/developers/docs/topics/opcodes-and-status-codes#json",
        meaning="credentials",
        wait=None,
        note="Docs' example JSON error; status 401 per the HTTP table (Authorization header missing or invalid).",
    ),
    # ----------------------------------------------------------------- Heroku
    Documented(
        id="heroku-platform-429-rate-limit",
        service="Heroku",
        status=429,
        headers={**_JSON, "RateLimit-Remaining": "0"},
        body=(
            '{"id": "rate_limit", "message": "Your account reached the API rate limit", '
            '"url": "https://devcenter.heroku.com/articles/platform-api-reference#rate-limits"}'
        ),
        source="https://devcenter.heroku.com/articles/platform-api-reference#rate-limits",
        meaning="wait",
        wait=None,
        note=(
            "Docs: error id rate_limit, wait for rate limits to reset and try again; tokens refill "
            "gradually, and no reset time is sent (RateLimit-Remaining only)."
        ),
    ),
    Documented(
        id="heroku-platform-402-delinquent",
        service="Heroku",
        status=402,
        headers=dict(_JSON),
        body=(
            '{"id": "delinquent", "message": "Either the account has become delinquent as a result of '
            "non-payment, or the account's payment method must be confirmed to continue.\"}"
        ),
        source="https://devcenter.heroku.com/articles/platform-api-reference#errors",
        meaning="quota",
        wait=None,
        note="Docs' error table: 402 delinquent; message filled from the table's description; the owner must pay.",
    ),
    # --------------------------------------------------------------- SendGrid
    Documented(
        id="sendgrid-v3-429-rate-limit",
        service="SendGrid",
        status=429,
        headers={
            **_JSON,
            "Date": NOW,
            "X-RateLimit-Limit": "150",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": "1796644860",
        },
        body='{"errors": [{"field": null, "message": "too many requests"}]}',
        source="https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/rate-limits",
        meaning="wait",
        wait=60.0,
        note=(
            "Docs: 429 until the refresh period ends; X-RateLimit-Reset is a Unix epoch (NOW_EPOCH + 60 here); "
            "the page's body has a trailing comma, dropped so the JSON parses."
        ),
    ),
    Documented(
        id="sendgrid-v3-400-field-errors",
        service="SendGrid",
        status=400,
        headers=dict(_JSON),
        body=(
            '{"errors": [{"field": "from.email", "message": "The from email does not contain a valid address."}, '
            '{"field": "subject", "message": "The subject is required."}]}'
        ),
        source="https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/errors",
        meaning="invalid",
        wait=None,
        fields=("from.email", "subject"),
        note="Docs show errors[] of {field, message} with placeholder values; field names and messages filled.",
    ),
    # ----------------------------------------------------------------- Resend
    Documented(
        id="resend-429-rate-limit-exceeded",
        service="Resend",
        status=429,
        headers={
            **_JSON,
            "ratelimit-limit": "5",
            "ratelimit-remaining": "0",
            "ratelimit-reset": "1",
            "retry-after": "1",
        },
        body=(
            '{"statusCode": 429, "message": "Too many requests. Please limit the number of requests per '
            'second. Or contact support to increase rate limit.", "name": "rate_limit_exceeded"}'
        ),
        source="https://resend.com/docs/api-reference/rate-limit",
        meaning="wait",
        wait=1.0,
        note=(
            "Headers follow IETF draft-06: ratelimit-reset is seconds until reset (not an epoch) and "
            "retry-after is seconds to wait; message as on the errors page (quoted by Resend's own Rust SDK)."
        ),
    ),
    Documented(
        id="resend-429-daily-quota-exceeded",
        service="Resend",
        status=429,
        headers=dict(_JSON),
        body=(
            '{"statusCode": 429, "message": "You have reached your daily email sending quota.", '
            '"name": "daily_quota_exceeded"}'
        ),
        source="https://resend.com/docs/api-reference/errors",
        meaning="quota",
        wait=None,
        note=(
            "Docs: upgrade the plan to remove the daily quota or wait until 24 hours have passed; "
            "a 429 that is a quota, not a throttle."
        ),
    ),
    # ---------------------------------------------------------------- Zendesk
    Documented(
        id="zendesk-429-retry-after",
        service="Zendesk",
        status=429,
        headers={"Retry-After": "93", "X-Rate-Limit": "700", "X-Rate-Limit-Remaining": "0"},
        body="",
        source="https://developer.zendesk.com/api-reference/introduction/rate-limits/",
        meaning="wait",
        wait=93.0,
        note=(
            "Docs: 429 with Retry-After giving the seconds to wait (93 in the page's example); "
            "X-Rate-Limit headers per the best-practices page; no body documented."
        ),
    ),
    # ----------------------------------------------------------------- GitLab
    Documented(
        id="gitlab-429-ratelimit-reset-epoch",
        service="GitLab",
        status=429,
        headers={
            "Content-Type": "text/plain",
            "Date": NOW,
            "RateLimit-Limit": "60",
            "RateLimit-Name": "throttle_authenticated_api",
            "RateLimit-Observed": "60",
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": "1796644830",
            "RateLimit-ResetTime": "Mon, 07 Dec 2026 12:00:30 GMT",
            "Retry-After": "30",
        },
        body="Retry later",
        source="https://docs.gitlab.com/administration/settings/user_and_ip_rate_limits/",
        meaning="wait",
        wait=30.0,
        note=(
            "Docs: plain-text body 'Retry later'; RateLimit-Reset is Unix time, RateLimit-ResetTime an "
            "RFC 2616 date, Retry-After the seconds until reset; all three agree on NOW + 30."
        ),
    ),
    # ------------------------------------------------------------------- Okta
    Documented(
        id="okta-429-e0000047",
        service="Okta",
        status=429,
        headers={
            **_JSON,
            "Date": NOW,
            "X-Rate-Limit-Limit": "600",
            "X-Rate-Limit-Remaining": "0",
            "X-Rate-Limit-Reset": "1796644860",
        },
        body=(
            '{"errorCode": "E0000047", "errorSummary": "API call exceeded rate limit due to too many '
            'requests.", "errorLink": "E0000047", "errorId": "sampleQPivGUj_ND5v78vbYWW", "errorCauses": []}'
        ),
        source="https://developer.okta.com/docs/reference/error-codes/#E0000047",
        meaning="wait",
        wait=60.0,
        note=(
            "X-Rate-Limit-Reset is UTC epoch seconds (https://developer.okta.com/docs/reference/rl-best-practices/), "
            "NOW_EPOCH + 60 here; error object fields per the error-codes page; limit 600 filled."
        ),
    ),
    # ------------------------------------------------ IETF RateLimit headers
    Documented(
        id="ietf-ratelimit-429-retry-after-date",
        service="IETF RateLimit header fields (draft)",
        status=429,
        headers={
            "Content-Type": "application/problem+json",
            "Date": NOW,
            "Retry-After": "Mon, 07 Dec 2026 12:00:05 GMT",
            "RateLimit": '"default";r=0;t=5',
        },
        body=(
            '{"type": "https://iana.org/assignments/http-problem-types#quota-exceeded", '
            '"title": "Too Many Requests", "status": 429, "violated-policies": ["default"]}'
        ),
        source="https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/",
        meaning="wait",
        wait=5.0,
        note=(
            "Draft's example: Retry-After HTTP-date and RateLimit t=5 name the same moment (NOW + 5); "
            'the draft\'s body lacks a comma after "type", added so the JSON parses.'
        ),
    ),
    Documented(
        id="ietf-ratelimit-429-dynamic-policy",
        service="IETF RateLimit header fields (draft)",
        status=429,
        headers={
            **_JSON,
            "RateLimit-Policy": '"dynamic";q=15;w=20',
            "RateLimit": '"dynamic";r=0;t=20',
        },
        body='{"status": 429, "detail": "Wait 20 seconds, then slow down!"}',
        source="https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/",
        meaning="wait",
        wait=20.0,
        note="Draft's 'pushing back' example: no Retry-After; r=0 with t=20 says the quota resets in 20 seconds.",
    ),
    Documented(
        id="ietf-ratelimit-429-retry-after-precedence",
        service="IETF RateLimit header fields (draft)",
        status=429,
        headers={
            **_JSON,
            "Retry-After": "20",
            "RateLimit-Policy": '"dynamic";q=100;w=60',
            "RateLimit": '"dynamic";r=15;t=40',
        },
        body='{"status": 429, "detail": "Wait 20 seconds, then slow down!"}',
        source="https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/",
        meaning="wait",
        wait=20.0,
        note=(
            "Two waits: Retry-After 20 vs RateLimit t=40; the draft says Retry-After MUST take precedence, "
            "so wait is 20 (t=40 is when the window resets, r=15 what is left then)."
        ),
    ),
    Documented(
        id="ietf-ratelimit-503-temporary-reduced-capacity",
        service="IETF RateLimit header fields (draft)",
        status=503,
        headers={"Content-Type": "application/problem+json"},
        body=(
            '{"type": "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity", '
            '"title": "Request cannot be satisfied due to temporary server capacity constraints", '
            '"violated-policies": ["hourly"]}'
        ),
        source="https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/",
        meaning="overloaded",
        wait=None,
        note="Draft's problem type: requests can't be served because server capacity is temporarily reduced.",
    ),
    # ---------------------------------------------------- RFC 9457 / RFC 7807
    Documented(
        id="rfc9457-422-validation-errors",
        service="RFC 9457 problem details",
        status=422,
        headers={"Content-Type": "application/problem+json", "Content-Language": "en"},
        body=(
            '{"type": "https://example.net/validation-error", "title": "Your request is not valid.", '
            '"errors": [{"detail": "must be a positive integer", "pointer": "#/age"}, '
            '{"detail": "must be \'green\', \'red\' or \'blue\'", "pointer": "#/profile/color"}]}'
        ),
        source="https://www.rfc-editor.org/rfc/rfc9457",
        meaning="invalid",
        wait=None,
        fields=("age", "color"),
        note=(
            "RFC 9457 section 3 example: an 'errors' extension of {detail, pointer} (JSON Pointer); "
            "RFC 9457 itself has no 'invalid-params' (that is RFC 7807, see the next entry)."
        ),
    ),
    Documented(
        id="rfc9457-403-out-of-credit",
        service="RFC 9457 problem details",
        status=403,
        headers={"Content-Type": "application/problem+json", "Content-Language": "en"},
        body=(
            '{"type": "https://example.com/probs/out-of-credit", "title": "You do not have enough credit.", '
            '"detail": "Your current balance is 30, but that costs 50.", '
            '"instance": "/account/12345/msgs/abc", "balance": 30, '
            '"accounts": ["/account/12345", "/account/67890"]}'
        ),
        source="https://www.rfc-editor.org/rfc/rfc9457",
        meaning="quota",
        wait=None,
        note="RFC 9457 section 3 example: out of credit; 'accounts' lists where the balance can be topped up.",
    ),
    Documented(
        id="rfc7807-400-invalid-params",
        service="RFC 9457 problem details",
        status=400,
        headers={"Content-Type": "application/problem+json", "Content-Language": "en"},
        body=(
            '{"type": "https://example.net/validation-error", '
            '"title": "Your request parameters didn\'t validate.", '
            '"invalid-params": [{"name": "age", "reason": "must be a positive integer"}, '
            '{"name": "color", "reason": "must be \'green\', \'red\' or \'blue\'"}]}'
        ),
        source="https://www.rfc-editor.org/rfc/rfc7807#section-3",
        meaning="invalid",
        wait=None,
        fields=("age", "color"),
        note="The 'invalid-params' example is RFC 7807's (obsoleted by RFC 9457, which replaced it with 'errors').",
    ),
    # ---------------------------------------------------------------- JSON:API
    Documented(
        id="jsonapi-422-invalid-attribute",
        service="JSON:API",
        status=422,
        headers={"Content-Type": "application/vnd.api+json"},
        body=(
            '{"errors": [{"status": "422", "source": {"pointer": "/data/attributes/firstName"}, '
            '"title": "Invalid Attribute", "detail": "First name must contain at least two characters."}]}'
        ),
        source="https://jsonapi.org/examples/#error-objects-basics",
        meaning="invalid",
        wait=None,
        fields=("firstName",),
        note="Basic error object: source.pointer names the request member at fault (see jsonapi.org/format/#errors).",
    ),
    Documented(
        id="jsonapi-400-invalid-query-parameter",
        service="JSON:API",
        status=400,
        headers={"Content-Type": "application/vnd.api+json"},
        body=(
            '{"errors": [{"source": {"parameter": "include"}, "title": "Invalid Query Parameter", '
            '"detail": "The resource does not have an `author` relationship path."}]}'
        ),
        source="https://jsonapi.org/examples/#error-objects-invalid-query-parameters",
        meaning="invalid",
        wait=None,
        fields=("include",),
        note="source.parameter names the URI query parameter at fault instead of a body pointer.",
    ),
    Documented(
        id="jsonapi-422-error-codes",
        service="JSON:API",
        status=422,
        headers={"Content-Type": "application/vnd.api+json"},
        body=(
            '{"jsonapi": {"version": "1.1"}, "errors": ['
            '{"code": "123", "source": {"pointer": "/data/attributes/firstName"}, '
            '"title": "Value is too short", "detail": "First name must contain at least two characters."}, '
            '{"code": "225", "source": {"pointer": "/data/attributes/password"}, '
            '"title": "Passwords must contain a letter, number, and punctuation character.", '
            '"detail": "The password provided is missing a punctuation character."}, '
            '{"code": "226", "source": {"pointer": "/data/attributes/password"}, '
            '"title": "Password and password confirmation do not match."}]}'
        ),
        source="https://jsonapi.org/examples/#error-objects-error-codes",
        meaning="invalid",
        wait=None,
        fields=("firstName", "password"),
        note="Several errors on two attributes, each with an application code; the third has no detail.",
    ),
    # --------------------------------------------------------------------- MDN
    Documented(
        id="mdn-429-retry-after-seconds",
        service="MDN",
        status=429,
        headers={"Content-Type": "text/html", "Retry-After": "3600"},
        body=(
            '<html lang="en-US">\n  <head>\n    <title>Too Many Requests</title>\n  </head>\n  <body>\n'
            "    <h1>Too Many Requests</h1>\n    <p>You're doing that too often! Try again later.</p>\n"
            "  </body>\n</html>\n"
        ),
        source="https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Status/429",
        meaning="wait",
        wait=3600.0,
        note="MDN example: server-wide rate limiting, requests allowed again after 3600 seconds.",
    ),
    Documented(
        id="mdn-503-retry-after-http-date",
        service="MDN",
        status=503,
        headers={
            "Content-Type": "text/html;",
            "Date": NOW,
            "Retry-After": "Mon, 07 Dec 2026 12:02:00 GMT",
        },
        body=(
            '<!doctype html>\n<html lang="en">\n<head>\n  <title>503 Service Unavailable</title>\n</head>\n'
            "<body>\n  <h1>503 Service Unavailable</h1>\n"
            "  <p>The server was unable to complete your request. Please try again later.</p>\n"
            '  <p>If this problem persists, please <a href="https://example.com/support">contact support</a>.</p>\n'
            "  <p>Server logs contain details of this error with request ID: ABC-123.</p>\n</body>\n</html>\n"
        ),
        source="https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Headers/Retry-After",
        meaning="server",
        wait=120.0,
        note=(
            "Retry-After page: an HTTP-date sent with a 503 for downtime (date set to NOW + 120); "
            "body is the 503 page's example; its Content-Length: 123 dropped as it does not match."
        ),
    ),
    Documented(
        id="mdn-504-gateway-timeout",
        service="MDN",
        status=504,
        headers={"Content-Type": "text/html;"},
        body=(
            '<!doctype html>\n<html lang="en">\n<head>\n  <title>504 Gateway Timeout</title>\n</head>\n'
            "<body>\n  <h1>Gateway timeout</h1>\n"
            "  <p>The server did not respond in time. Please try again later.</p>\n"
            '  <p>If this problem persists, please <a href="https://example.com/support">contact support</a>.</p>\n'
            "</body>\n</html>\n"
        ),
        source="https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Status/504",
        meaning="timeout-may-have-acted",
        wait=None,
        note="MDN example: the gateway got no timely response from upstream; Content-Length: 123 dropped.",
    ),
    # ------------------------------------------------ Salesforce Marketing Cloud
    Documented(
        id="sfmc-429-50100-retry-after",
        service="Salesforce Marketing Cloud",
        status=429,
        headers={"Content-Type": "application/json; charset=utf-8", "Retry-After": "5"},
        body=(
            '{"message": "Rate limit exceeded", "errorcode": 50100, "retryAfter": 5, '
            '"documentation": "https://developer.salesforce.com/docs/atlas.en-us.mc-apis.meta/mc-apis/'
            'error-handling.htm"}'
        ),
        source="https://developer.salesforce.com/docs/atlas.en-us.mc-apis.meta/mc-apis/rate-limiting-errors.htm",
        meaning="wait",
        wait=5.0,
        note="Docs' example: the wait appears twice, Retry-After header and retryAfter in the body, both 5.",
    ),
    Documented(
        id="sfmc-429-50200-temporarily-blocked",
        service="Salesforce Marketing Cloud",
        status=429,
        headers={"Content-Type": "application/json; charset=utf-8"},
        body=(
            '{"message": "Your requests are temporarily blocked.", "errorcode": 50200, '
            '"documentation": "https://developer.salesforce.com/docs/atlas.en-us.mc-apis.meta/mc-apis/'
            'error-handling.htm"}'
        ),
        source="https://developer.salesforce.com/docs/atlas.en-us.mc-apis.meta/mc-apis/rate-limiting-errors.htm",
        meaning="wait",
        wait=None,
        note="Docs' example: throttled until the requests causing the issue cease; no Retry-After, no wait stated.",
    ),
    # ---------------------------------------------------------------- Mistral
    Documented(
        id="mistral-400-unknown-model",
        service="Mistral",
        status=400,
        headers=dict(_JSON),
        body=(
            '{"object": "error", "message": "A human-readable description of the error.", '
            '"type": "invalid_request_error", "param": "model", "code": "unknown_model"}'
        ),
        source="https://docs.mistral.ai/resources/error-glossary",
        meaning="invalid",
        wait=None,
        fields=("model",),
        note="Body verbatim from the glossary's error-format example (param names the field); status 400 filled.",
    ),
    # ------------------------------------------------------------------- Groq
    Documented(
        id="groq-429-retry-after-and-duration-resets",
        service="Groq",
        status=429,
        headers={
            "retry-after": "2",
            "x-ratelimit-limit-requests": "14400",
            "x-ratelimit-limit-tokens": "18000",
            "x-ratelimit-remaining-requests": "14370",
            "x-ratelimit-remaining-tokens": "0",
            "x-ratelimit-reset-requests": "2m59.56s",
            "x-ratelimit-reset-tokens": "7.66s",
        },
        body="",
        source="https://console.groq.com/docs/rate-limits",
        meaning="wait",
        wait=2.0,
        note=(
            "retry-after (seconds, set only on 429) is the wait; the reset headers are Go-style durations "
            "(2m59.56s, 7.66s as the page's examples); retry-after value 2 and the counts filled; no body shown."
        ),
    ),
)
