"""s3fs's storage options in obstore's spelling, where they mean the same: what decides whether
a plain `s3://` URL can go to the obstore store (`s3_routing`).

`obstore_s3_options(options, environ)` answers obstore's options, or the reason they cannot be
given to obstore faithfully (then fsspec opens the URL, as it always did):

| s3fs                                     | obstore                                        |
|------------------------------------------|------------------------------------------------|
| `key` (or `username`)                    | `access_key_id`                                |
| `secret` (or `password`)                 | `secret_access_key`                            |
| `token`                                  | `session_token`                                |
| `anon=True`                              | `skip_signature=True`                          |
| `endpoint_url`, `client_kwargs.endpoint_url` | `endpoint` (and `client_options.allow_http` for http://) |
| `client_kwargs.region_name`              | `region`                                       |
| `requester_pays=True`                    | `request_payer=True`                           |
| `use_ssl=True`, `anon=False`, `requester_pays=False` | (the defaults of both)             |

Options already in obstore's spelling pass as they are; any other option (`config_kwargs`,
`profile`, `session`, `version_aware`, `s3_additional_kwargs`, ...) has no faithful obstore
spelling, and so does an s3fs spelling and an obstore spelling of the same setting together.

Beyond the spelling, the two clients differ in what they do by themselves, and obstore is
chosen only where that cannot matter:
- s3fs follows S3's redirect to a bucket's region; obstore does not. Without an endpoint or a
  region among the options, the URL stays with fsspec.
- botocore finds credentials in `~/.aws` files and profiles; obstore only in the environment
  (and cloud metadata). Without credentials among the options (or `anon`), and without
  `AWS_ACCESS_KEY_ID` in the environment, the URL stays with fsspec.
- obstore reads more `AWS_*` variables than botocore (`AWS_ENDPOINT`, `AWS_TOKEN`,
  `AWS_SKIP_SIGNATURE`, ...), and pairs `AWS_SESSION_TOKEN` with keys given in the options;
  with such a variable set, the URL stays with fsspec, so that nothing from the environment
  reaches a store that s3fs would not have given it.
- `AWS_ENDPOINT_URL_S3` is botocore's endpoint for S3 and, in obstore's stubs, one that
  overrides `endpoint` (obstore 0.12 ignores it): with it set, the URL stays with fsspec, so
  credentials never go to another endpoint than the one s3fs would use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrkit.errors import UntranslatableOptionsError

#: obstore's `S3Config` keys (obstore's type stubs), and its other keyword arguments
OBSTORE_S3_KEYS = frozenset(
    {
        "access_key_id",
        "aws_endpoint_url_s3",
        "bucket",
        "checksum_algorithm",
        "conditional_put",
        "container_credentials_relative_uri",
        "container_credentials_full_uri",
        "container_authorization_token_file",
        "copy_if_not_exists",
        "default_region",
        "disable_tagging",
        "disable_bulk_delete",
        "endpoint",
        "imdsv1_fallback",
        "metadata_endpoint",
        "region",
        "request_payer",
        "role_arn",
        "role_session_name",
        "s3_express",
        "secret_access_key",
        "server_side_encryption",
        "session_token",
        "skip_signature",
        "sse_bucket_key_enabled",
        "sse_customer_key_base64",
        "sse_kms_key_id",
        "sts_endpoint",
        "unsigned_payload",
        "virtual_hosted_style_request",
        "web_identity_token_file",
        # not configuration keys: the constructor's other arguments
        "config",
        "client_options",
        "retry_config",
        "credential_provider",
    }
)

#: options of the store itself (not of either client), passed on as they are
STORE_KEYS = frozenset({"concurrency"})

#: s3fs's spellings with the same meaning in obstore
_RENAMED = {
    "key": "access_key_id",
    "username": "access_key_id",
    "secret": "secret_access_key",
    "password": "secret_access_key",
    "token": "session_token",
    "endpoint_url": "endpoint",
}

#: s3fs's flags whose value is also obstore's default, and what obstore calls them when set
_FLAGS: dict[str, tuple[bool, str | None]] = {
    "anon": (False, "skip_signature"),
    "requester_pays": (False, "request_payer"),
    "use_ssl": (True, None),
}

#: `AWS_*` variables obstore reads and botocore does not (or reads differently)
OBSTORE_ONLY_ENVIRONMENT = frozenset(
    {
        "AWS_ENDPOINT",
        "AWS_TOKEN",
        "AWS_SKIP_SIGNATURE",
        "AWS_REQUEST_PAYER",
        "AWS_REQUESTER_PAYS",
        "AWS_ALLOW_HTTP",
        "AWS_VIRTUAL_HOSTED_STYLE_REQUEST",
        "AWS_UNSIGNED_PAYLOAD",
        "AWS_BUCKET",
        "AWS_BUCKET_NAME",
        "AWS_CONDITIONAL_PUT",
        "AWS_COPY_IF_NOT_EXISTS",
        "AWS_SERVER_SIDE_ENCRYPTION",
        "AWS_SSE_KMS_KEY_ID",
        "AWS_SSE_BUCKET_KEY_ENABLED",
        "AWS_SSE_CUSTOMER_KEY_BASE64",
        "AWS_CHECKSUM_ALGORITHM",
        "AWS_S3_EXPRESS",
        "AWS_DISABLE_TAGGING",
        "AWS_DISABLE_BULK_DELETE",
        "AWS_IMDSV1_FALLBACK",
        "AWS_METADATA_ENDPOINT",
        "AWS_ENDPOINT_URL_S3",
        "AWS_PROFILE",  # (botocore's: its credentials are in ~/.aws, which obstore never reads)
    }
)


def obstore_s3_options(options: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """`options` (s3fs's spelling, obstore's, or both for different settings) as obstore's,
    with the same meaning; raises `UntranslatableOptionsError` saying why not."""
    out: dict[str, Any] = {}
    client: dict[str, Any] = {}
    for name, value in options.items():
        if name in STORE_KEYS or name in OBSTORE_S3_KEYS:
            _put(out, name, value, name)
        elif name in _RENAMED:
            if value is not None:  # (s3fs's default: not given)
                _put(out, _RENAMED[name], value, name)
        elif name in _FLAGS:
            default, spelled = _FLAGS[name]
            if not isinstance(value, bool):
                raise UntranslatableOptionsError(f"{name}={value!r} is not a bool")
            if value != default:
                if spelled is None:
                    raise UntranslatableOptionsError(f"{name}={value!r}")
                _put(out, spelled, True, name)
        elif name == "client_kwargs":
            if value is not None and not isinstance(value, Mapping):
                raise UntranslatableOptionsError(f"client_kwargs={value!r} is not a mapping")
            client = dict(value or {})
        else:
            raise UntranslatableOptionsError(f"obstore has no option {name!r}")
    for name, value in client.items():
        target = {"endpoint_url": "endpoint", "region_name": "region"}.get(name)
        if target is None:
            raise UntranslatableOptionsError(f"obstore has no option client_kwargs[{name!r}]")
        if value is not None and not (target == "endpoint" and options.get("endpoint_url")):
            _put(out, target, value, f"client_kwargs[{name!r}]")
    _check_environment(out, options, environ)
    if set(options) - OBSTORE_S3_KEYS - STORE_KEYS:  # (some spelled for s3fs)
        out = _allow_http(out)
    return out


def _put(out: dict[str, Any], key: str, value: Any, given_as: str) -> None:
    if key in out and out[key] != value:
        raise UntranslatableOptionsError(
            f"{given_as} and another option both set obstore's {key!r}"
        )
    out[key] = value


def _check_environment(
    out: Mapping[str, Any], options: Mapping[str, Any], environ: Mapping[str, str]
) -> None:
    """Refuse what obstore would do differently because of where it runs (module doc)."""
    only_obstore = set(options) <= OBSTORE_S3_KEYS | STORE_KEYS and bool(options)
    if only_obstore:  # spelled for obstore: obstore's own rules, as with obstore+s3://
        return
    stray = sorted(OBSTORE_ONLY_ENVIRONMENT & set(environ))
    if stray:
        raise UntranslatableOptionsError(f"the environment sets {', '.join(stray)}")
    if "endpoint" not in out and "region" not in out:
        raise UntranslatableOptionsError(
            "no endpoint and no region: s3fs finds a bucket's region itself"
        )
    signed = not out.get("skip_signature")
    if signed and "access_key_id" not in out and "AWS_ACCESS_KEY_ID" not in environ:
        raise UntranslatableOptionsError("no credentials given: botocore may find them in ~/.aws")
    if "access_key_id" in out and "session_token" not in out and "AWS_SESSION_TOKEN" in environ:
        raise UntranslatableOptionsError("obstore would pair AWS_SESSION_TOKEN with the keys given")


def _allow_http(out: dict[str, Any]) -> dict[str, Any]:
    """Plain http allowed where s3fs's endpoint is http (s3fs takes it; obstore must be told)."""
    endpoint = out.get("endpoint")
    if isinstance(endpoint, str) and endpoint.startswith("http://"):
        client = dict(out.get("client_options") or {})
        client.setdefault("allow_http", True)
        out["client_options"] = client
    return out
