"""One planted secret per class of credential the masking must recognise by its shape.

Each entry is (class, text holding the secret, the part of it that must never be shown). The
classes are the high-confidence rules of the common secret scanners; the values are made up
but have the real shapes.
"""

from __future__ import annotations

PEM_BODY = "MIIEowIBAAKCAQEA7bq98mXcanary0PemBodyLine1\nAbCdEf0123456789canary0PemBodyLine2+/=="

CANARIES: list[tuple[str, str, str]] = [
    ("openai", "key sk-proj-ZZZZ0000YYYY1111XXXX2222WWWW3333 rejected", "ZZZZ0000YYYY1111"),
    ("stripe-secret", "Invalid API Key provided: sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWD"),
    ("stripe-restricted", "key rk_live_51H8yXCkT6Z9aBcDeFgHiJkLm is revoked", "51H8yXCkT6Z9"),
    ("github", "token ghp_16C7e42F292c6912E7710c838347Ae178B4a expired", "16C7e42F292c"),
    (
        "github-fine-grained",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstu",
        "11ABCDEFG0123",
    ),
    ("gitlab", "gitlab glpat-xY9zA8bC7dE6fG5hI4jK was refused", "xY9zA8bC7dE6"),
    (
        "slack-token",
        "slack xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "AbCdEfGhIjKl",
    ),
    (
        "slack-webhook",
        "POST https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/abcdefghijklmnopqrstuvwx",
        "abcdefghijklmnopqrstuvwx",
    ),
    ("twilio", "Twilio key SK0123456789abcdef0123456789abcdef denied", "0123456789abcdef0123"),
    (
        "sendgrid",
        "SendGrid: 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 bad",
        "TwL2iGABf9DHoTf",
    ),
    (
        "npm",
        "npm rejected npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "abcdefghijklmnop",
    ),
    (
        "pypi",
        "upload with pypi-AgEIcHlwaS5vcmcCJGNhbmFyeS0wMDAwLTExMTEtMjIyMi0zMzMzNDQ0NDU1NTUAAi",
        "cCJGNhbmFyeS0wMDAwLTExMTE",
    ),
    (
        "huggingface",
        "HF said: hf_abcdefghijklmnopqrstuvwxyzABCDEFGH is invalid",
        "abcdefghijklmnopqrstuvwxyzAB",
    ),
    (
        "azure-client-secret",
        "client secret abc8Q~abcdefghijklmnopqrstuvwxyz01234 expired",
        "Q~abcdefghijklmnop",
    ),
    (
        "azure-storage",
        "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEt"
        "lCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core",
        "Eby8vdM02xNOcqFl",
    ),
    (
        "gcp-service-account",
        '{"type": "service_account", "project_id": "shop", "private_key_id": '
        '"a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "private_key": "-----BEGIN PRIVATE KEY-----'
        '\\nMIIEvQIBADANBgkqhkiG9w0canaryGcpKey0BAQEFAASC\\n-----END PRIVATE KEY-----\\n"}',
        "canaryGcpKey",
    ),
    (
        "gcp-service-account-key-id",
        '{"private_key_id": "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"}',
        "a1b2c3d4e5f607",
    ),
    ("aws-access-key-id", "aws AKIAIOSFODNN7CANARY0 used", "IOSFODNN7CANARY0"),
    (
        "aws-secret-env",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARYKEY",
        "wJalrXUtnFEMI",
    ),
    (
        "aws-secret-json",
        '{"AccessKeyId": "x", "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY"}',
        "wJalrXUtnFEMI",
    ),
    (
        "pem-private-key",
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
        "canary0PemBody",
    ),
    (
        "pem-openssh",
        f"key: -----BEGIN OPENSSH PRIVATE KEY----- {PEM_BODY} -----END OPENSSH PRIVATE KEY-----",
        "canary0PemBody",
    ),
    ("card-free-text", "card 4111 1111 1111 1111 was declined", "4111 1111 1111 1111"),
    ("card-dashes", "card 5555-5555-5555-4444 was declined", "5555-5555-5555-4444"),
    ("card-json", '{"number": "378282246310005", "cvc": "1"}', "378282246310005"),
    (
        "database-url",
        "could not connect to postgres://shop:Sup3rS3cretCanary@db.internal:5432/orders",
        "Sup3rS3cretCanary",
    ),
    (
        "database-url-odd-password",
        "mysql://admin:p@ssCanary:w0rd@db.example/shop failed",
        "ssCanary",
    ),
    ("redis-url", "redis://:r3disCanaryPw@cache.internal:6379/0 refused", "r3disCanaryPw"),
    (
        "telegram-bot",
        "GET https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawX/getMe",
        "AAHdqTcvCH1vGWJxfSeof",
    ),
    (
        "jwt",
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.SflKxwRJSMeKKF2QT4fwpM",
        "eyJzdWIiOiJjYW5hcnkifQ",
    ),
    ("escaped-json-password", '{\\"password\\": \\"canary-hunter2\\"}', "canary-hunter2"),
    ("escaped-slash-url", "https:\\/\\/admin:canaryPw99@host.example\\/v1", "canaryPw99"),
    ("quoted-passphrase", 'password: "correct horse canary staple"', "horse canary staple"),
]

# Credentials after a scheme word, and values that are not one word, in the places they are
# written: each found by an adversarial review, where the one-word rules showed them.
CANARIES += [
    # Okta: "Authorization: SSWS ${api_token}"
    # (https://developer.okta.com/docs/guides/create-an-api-token/main/).
    ("okta-ssws", "Authorization: SSWS 00Cn4ryOkt4T0ken-AbCdEfGhIjKlMnOpQrStUvWx", "T0ken-AbCdEf"),
    # Discord: "Authorization: Bot <token>"
    # (https://discord.com/developers/docs/reference#authentication).
    (
        "discord-bot",
        "Authorization: Bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cn4ryQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        "ZnCjm1XVW7vRze4b",
    ),
    # DeepL: "Authorization: DeepL-Auth-Key [yourAuthKey]", a free plan's key ending in ":fx"
    # (https://developers.deepl.com/docs/getting-started/auth).
    (
        "deepl-auth-key",
        "Authorization: DeepL-Auth-Key 279a2e9d-83b3-c416-7e2d-f721593e42a0:fx",
        "83b3-c416-7e2d",
    ),
    # Elasticsearch: "Authorization: ApiKey <base64 of id:api_key>" (https://www.elastic.co/
    # guide/en/elasticsearch/reference/current/security-api-create-api-key.html).
    (
        "elastic-apikey",
        "Authorization: ApiKey VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==",
        "dWkybHAyYXhUTm1z",
    ),
    ("unquoted-passphrase", "password: correct horse battery", "horse battery"),
    # Ruby's and PHP's hash syntax.
    ("ruby-hash", '{"password" => "Cn4ry rocket pw", "user" => "bob"}', "Cn4ry rocket"),
    ("php-array", "array('password' => 'Cn4ry php pw')", "Cn4ry php"),
    # ADO.NET connection strings, "Password=..." (https://learn.microsoft.com/en-us/dotnet/
    # framework/data/adonet/connection-string-syntax), here with a ";" inside the value.
    (
        "connection-string",
        "Server=db;Database=shop;User Id=shop;Password=Cn4ryS3mi;c0lonPart;Encrypt=true",
        "c0lonPart",
    ),
    # ODBC's PWD, braced when it holds a ";" (https://learn.microsoft.com/en-us/sql/odbc/
    # reference/syntax/sqldriverconnect-function).
    ("odbc-pwd", "Driver={ODBC Driver 18};Server=db;UID=shop;PWD={Cn4ry;pw99};", "Cn4ry;pw99"),
    ("odbc-pwd-bare", "DSN=shop;UID=shop;PWD=Cn4ryOdbcPw77", "Cn4ryOdbcPw77"),
    # Stripe's wording of a refused key, here an opaque one.
    ("api-key-provided", "Invalid API Key provided: Cn4ryOpaqueValue77", "Cn4ryOpaqueValue77"),
    (
        "relative-url-key",
        "GET /maps/api/geocode/json?address=x&key=Cn4ryOpaqueK3y0123 failed",
        "Cn4ryOpaqueK3y",
    ),
    # An AWS secret access key alone: 40 characters of base64's alphabet
    # (https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html).
    (
        "aws-secret-bare",
        "secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYCn4ryK3Y01 was used",
        "bPxRfiCYCn4ry",
    ),
    ("aws-secret-bare-json", '{"v": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYCn4ryK3Y01"}', "bPxRfiCYCn4ry"),
    (
        "percent-encoded-json",
        "payload=%7B%22password%22%3A%22Cn4ry%20pct%20pw%22%7D",
        "Cn4ry%20pct",
    ),
    (
        "html-escaped-json",
        "{&quot;password&quot;: &quot;Cn4ry html pw&quot;, &quot;user&quot;: &quot;bob&quot;}",
        "Cn4ry html",
    ),
    (
        "percent-encoded-key-in-path",
        "GET https://api.example/v1/keys/sk%5Flive%5F4eC39HqLyjWDarjtT1zdp7dc/usage failed",
        "4eC39HqLyjWDarjtT1zdp7dc",
    ),
    (
        "base64-encoded-key",  # the base64 of sk_live_4eC39HqLyjWDarjtT1zdp7dc
        "echo c2tfbGl2ZV80ZUMzOUhxTHlqV0Rhcmp0VDF6ZHA3ZGM= refused",
        "ZV80ZUMzOUhxTHlqV0Rhcmp0",
    ),
]

# The key formats masked by their prefix and shape, each as a whole token: tests plant them in a
# URL, a header, a JSON body and an exception message (the values are made up).
KEY_FORMATS: list[tuple[str, str]] = [
    ("shopify", "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"),
    ("digitalocean", "dop_v1_c0ffee019a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d"),
    ("square", "sq0atp-Pq7Ss1Qb8xL2mN7vR9kT4w"),
    ("groq", "gsk_Cn4ryGr0qK3yAbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd"),
    (
        "xai",
        "xai-Cn4ryXa1K3yAbCdEfGhIjKlMnOpQrStUvWxYz0123456789ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543",
    ),
    ("google-oauth-token", "ya29.a0AfH6SMBCn4ryG00gleOAuthT0ken_x-1234567890"),
    ("google-oauth-client-secret", "GOCSPX-Cn4ryCl1entS3cretAbCdEfGhIjK"),
    ("mailgun", "key-3aa6abcd29cd6fde4fc373efacabecd0"),
    ("atlassian", "ATATT3xFfGF0" + "Cn4ryAtl4ss1anT0ken_-" * 8 + "Cn4=079C5884"),
    ("linear", "lin_api_Cn4ryL1nearK3yAbCdEfGhIjKlMnOpQrStUvWxYz"),
    ("notion", "secret_Cn4ryN0t1onT0kenAbCdEfGhIjKlMnOpQrStUvWxYz0"),
    ("notion-ntn", "ntn_45647615172Cn4ryN0t1onT0kenAbCdEfGhIjKlMnOpQrs"),
    ("databricks", "dapic0ffee0123456789abcdefabcdef0123"),
    ("postman", "PMAK-c0ffee12da39cd50e9ab4ea7-cafe01234fdea2d2075d8966cac3b7f10b"),
    ("heroku", "HRKU-AACn4ryH3r0kuT0ken_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-Zyxw"),
    # Stripe webhook signing secrets start "whsec_" (https://docs.stripe.com/webhooks#verify-events).
    ("stripe-webhook", "whsec_Cn4ryW3bh00kS1gn1ngS3cretAbCdEf0123"),
]

CANARIES += [(name, f"upstream refused {token} here", token[-16:]) for name, token in KEY_FORMATS]
