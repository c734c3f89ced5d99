"""The API's request and response schemas, the validator that enforces them, and the OpenAPI
document made from them, so the description cannot drift from what the code checks.

Each ``/api`` view is decorated with :func:`document`: its summary, the JSON Schema of the body
it accepts (validated by :func:`valid_body`, the one way a view reads its body), the schema of
what it answers, and the error statuses it may give. :func:`openapi_document` walks the app's
routes and writes the OpenAPI 3.1 document from those specs: path parameters from the route's
converters, the PIN and CSRF requirements from :func:`web.security.require_admin`. A route
without a spec is an error at document time, not a hole in the document. With the app's
``VALIDATE_RESPONSES`` set (the tests set it) every JSON answer of a documented route is checked
against the schema of its status, so a response that drifts from its description fails a test.

The validator covers the JSON Schema keywords these schemas use (``type``, ``enum``, ``const``,
``properties``, ``required``, ``additionalProperties``, ``items``, ``minItems``/``maxItems``,
``minLength``/``maxLength``, ``minimum``/``maximum``, ``oneOf``, ``$ref`` to a component);
an unknown keyword is refused when the document is built, so no schema says more than is checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import Flask, Response, current_app, request

from web.errors import ApiError

JSON = "application/json"
F = TypeVar("F", bound=Callable[..., Any])
ERROR = {"$ref": "#/components/schemas/Error"}
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {"type": "string"},
        "code": {"type": "string", "description": "the rule broken (409 on a step)"},
        "rulings": {"type": "array", "items": {"type": "integer"}},
        "rule": {"type": "string"},
        "player": {"type": ["integer", "null"]},
    },
}
COMPONENTS = {"Error": ERROR_SCHEMA}
ERROR_TEXT = {
    400: "malformed JSON or a bad field",
    401: "admin PIN required",
    403: "wrong PIN, or a forged request (CSRF token or origin)",
    404: "unknown game, warning or route",
    409: "illegal step, or a conflict with the game's state",
    415: "the body is not application/json",
    422: "a step or correction the engine refuses",
    429: "too many wrong PINs: wait (Retry-After)",
    503: "the game record cannot be written now (disk full, read-only media): nothing was changed",
}
KEYWORDS = {
    "type", "enum", "const", "properties", "required", "additionalProperties", "items", "minItems",
    "maxItems", "minLength", "maxLength", "minimum", "maximum", "oneOf", "$ref", "description", "format",
}  # fmt: skip
TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
TYPE_WORDS = {
    "object": "an object",
    "array": "a list",
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


@dataclass(frozen=True, slots=True)
class Spec:
    """What one view takes and gives (see :func:`document`)."""

    summary: str
    ok: dict[str, Any] | None
    body: dict[str, Any] | None
    errors: tuple[int, ...]
    ok_status: int
    media: str
    body_required: bool
    query: tuple[tuple[str, dict[str, Any]], ...]
    headers: tuple[tuple[str, dict[str, Any]], ...]


def document(
    summary: str,
    *,
    ok: dict[str, Any] | None = None,
    body: dict[str, Any] | None = None,
    errors: tuple[int, ...] = (),
    ok_status: int = 200,
    media: str = JSON,
    body_required: bool = True,
    query: dict[str, dict[str, Any]] | None = None,
    headers: dict[str, dict[str, Any]] | None = None,
) -> Callable[[F], F]:
    """Attach a view's spec: ``ok`` the schema of its success answer (JSON unless ``media``
    says otherwise), ``body`` the schema :func:`valid_body` enforces, ``errors`` the 4xx it gives."""
    if media == JSON and ok is None:
        raise ValueError(f"document({summary!r}): a JSON answer needs its schema (ok=...)")
    for schema in (ok, body):
        if schema is not None:
            check_schema(schema)
    spec = Spec(
        summary,
        ok,
        body,
        tuple(errors),
        ok_status,
        media,
        body_required,
        tuple((query or {}).items()),
        tuple((headers or {}).items()),
    )

    def mark(view: F) -> F:
        view.api_spec = spec  # type: ignore[attr-defined]
        return view

    return mark


def check_schema(schema: Any, where: str = "schema") -> None:
    """Refuse a keyword the validator does not enforce (a schema must not promise more)."""
    if not isinstance(schema, dict):
        raise ValueError(f"{where or 'body'}: expected a schema object")
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise ValueError(
            f"{where or 'body'}: keyword(s) {sorted(unknown)} are not enforced by web.schemas.validate"
        )
    for key, sub in schema.get("properties", {}).items():
        check_schema(sub, f"{where}.{key}")
    if isinstance(schema.get("items"), dict):
        check_schema(schema["items"], f"{where}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        check_schema(schema["additionalProperties"], f"{where}.*")
    for i, sub in enumerate(schema.get("oneOf", [])):
        check_schema(sub, f"{where}.oneOf[{i}]")


# ---------------------------------------------------------------- validation


class SchemaError(ValueError):
    """A value that does not match its schema; the message names where and why."""


def _types(schema: dict[str, Any]) -> list[str]:
    t = schema.get("type")
    return [t] if isinstance(t, str) else list(t or [])


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _expected(schema: dict[str, Any]) -> str:
    types = _types(schema)
    if "array" in types and ("minItems" in schema or "maxItems" in schema):
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        if hi is None:
            return f"a list of at least {lo} items"
        return f"{lo} items" if lo == hi else f"a list of {lo} to {hi} items"
    return " or ".join(TYPE_WORDS[t] for t in types)


def validate(schema: dict[str, Any], value: Any, where: str = "") -> None:
    """Raise :class:`SchemaError` naming the first place ``value`` breaks ``schema``."""
    if "$ref" in schema:
        schema = COMPONENTS[schema["$ref"].rsplit("/", 1)[-1]]
    if "oneOf" in schema:
        failed: list[tuple[bool, SchemaError]] = []
        for sub in schema["oneOf"]:
            try:
                validate(sub, value, where)
            except SchemaError as exc:
                failed.append((any(TYPES[t](value) for t in _types(sub)), exc))
        if len(failed) == len(schema["oneOf"]):  # none matched: the form of the value's type says why
            raise next((exc for same_type, exc in failed if same_type), failed[0][1])
        if len(schema["oneOf"]) - len(failed) > 1:
            raise SchemaError(f"{where or 'body'}: matches more than one form")
        return
    types = _types(schema)
    if types and not any(TYPES[t](value) for t in types):
        raise SchemaError(f"{where or 'body'}: expected {_expected(schema)}, got {_show(value)}")
    if "const" in schema and value != schema["const"]:
        raise SchemaError(f"{where or 'body'}: expected {_show(schema['const'])}, got {_show(value)}")
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(f"{where or 'body'}: expected one of {list(schema['enum'])}, got {_show(value)}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            raise SchemaError(f"{where or 'body'}: expected at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise SchemaError(f"{where or 'body'}: expected at most {schema['maxLength']} characters")
    if TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            raise SchemaError(f"{where or 'body'}: expected at least {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise SchemaError(f"{where or 'body'}: expected at most {schema['maximum']}, got {value}")
    if isinstance(value, list):
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        if len(value) < lo or (hi is not None and len(value) > hi):
            raise SchemaError(f"{where or 'body'}: expected {_expected(schema)}, got {len(value)}")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                validate(schema["items"], item, f"{where}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                raise SchemaError(f"{_at(where, key)}: required")
        extra = schema.get("additionalProperties", True)
        unknown = sorted(k for k in value if k not in props)
        if extra is False and unknown:
            raise SchemaError(f"{where or 'body'}: unknown field(s) {unknown} (expected {sorted(props)})")
        for key, sub in props.items():
            if key in value:
                validate(sub, value[key], _at(where, key))
        if isinstance(extra, dict):
            for key in unknown:
                validate(extra, value[key], _at(where, key))


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def json_body(required: bool = True) -> dict[str, Any]:
    """The request's JSON object; 415 if it is not JSON, 400 if it is malformed."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if required:
            raise ApiError(400, "malformed JSON: the request body is empty (expected a JSON object)")
        return {}
    if request.mimetype != JSON:
        raise ApiError(415, f"expected Content-Type application/json, got {request.mimetype or 'none'!r}")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"malformed JSON: {exc}") from exc
    except RecursionError as exc:
        raise ApiError(400, "malformed JSON: nested too deeply") from exc
    if not isinstance(data, dict):
        raise ApiError(400, f"malformed JSON: expected an object, got {type(data).__name__}")
    return data


def valid_body(name: str = "") -> dict[str, Any]:
    """The request's JSON body, checked against the route's documented body schema (400 naming
    the field, under ``name`` when given: "settings.serial_port: ..."); a route documented with
    no body takes none, or an empty object."""
    spec = spec_of_request()
    schema = spec.body if spec is not None else None
    data = json_body(required=schema is not None and spec is not None and spec.body_required)
    try:
        validate(schema or {"type": "object", "additionalProperties": False}, data, name)
    except SchemaError as exc:
        raise ApiError(400, str(exc)) from exc
    return data


def spec_of_request() -> Spec | None:
    view = current_app.view_functions.get(request.endpoint or "")
    return getattr(view, "api_spec", None)


# ---------------------------------------------------------------- checking answers


def check_response(resp: Response) -> Response:
    """``VALIDATE_RESPONSES``: a JSON answer must match its documented schema (an error answer
    the Error schema, and its status must be documented); a mismatch is a 500 naming it."""
    if not current_app.config.get("VALIDATE_RESPONSES") or not request.path.startswith("/api/"):
        return resp
    spec = spec_of_request()
    if spec is None or resp.mimetype != JSON or resp.is_streamed:
        return resp
    status = resp.status_code
    if status == spec.ok_status:
        schema = spec.ok or {}
    elif status >= 400:
        if status not in documented_errors(spec, request.endpoint or "") and status not in (405, 413, 503):
            return _mismatch(f"status {status} is not documented: {resp.get_data(as_text=True)[:200]}")
        schema = ERROR
    else:
        return _mismatch(f"status {status} is not documented")
    try:
        validate(schema, json.loads(resp.get_data()), "response")
    except SchemaError as exc:
        return _mismatch(str(exc))
    return resp


def _mismatch(why: str) -> Response:
    resp = Response(
        json.dumps(
            {
                "error": f"{request.method} {request.path}: the answer does not match "
                f"the OpenAPI document: {why}"
            }
        ),
        status=500,
        mimetype=JSON,
    )
    return resp


def documented_errors(spec: Spec, endpoint: str) -> set[int]:
    """Every error status the route may give: its own, the PIN's for a change, 400/415 for a body."""
    out = set(spec.errors)
    view = current_app.view_functions.get(endpoint)
    if getattr(view, "needs_admin", False):
        out |= {401, 403, 429}
    if request.method in ("POST", "PUT", "PATCH", "DELETE"):
        out |= {400, 403, 415}  # a bad body, a forged request, a body that is not JSON
    return out


# ---------------------------------------------------------------- the document


def openapi_path(rule: str) -> str:
    return re.sub(r"<(?:[a-z]+(?:\([^)]*\))?:)?([a-z_]+)>", r"{\1}", rule)


PARAM_TYPES = {"int": {"type": "integer"}, "float": {"type": "number"}}


def _errors(codes: set[int]) -> dict[str, Any]:
    return {
        str(c): {"description": ERROR_TEXT[c], "content": {JSON: {"schema": ERROR}}} for c in sorted(codes)
    }


def operation(app: Flask, endpoint: str, method: str, rule: Any) -> dict[str, Any]:
    view = app.view_functions[endpoint]
    spec: Spec | None = getattr(view, "api_spec", None)
    if spec is None:
        raise ValueError(
            f"{method} {rule.rule} ({endpoint}) has no API spec: decorate it with web.schemas.document"
        )
    admin = bool(getattr(view, "needs_admin", False))
    changes = method in ("post", "put", "patch", "delete")
    errors = (
        set(spec.errors) | ({401, 403, 429} if admin else set()) | ({400, 403, 415} if changes else set())
    )
    op: dict[str, Any] = {
        "summary": spec.summary,
        "operationId": endpoint.replace(".", "_"),
        "responses": {
            str(spec.ok_status): {
                "description": "OK",
                "content": {spec.media: {"schema": spec.ok or {"type": "string"}}},
            },
            **_errors(errors),
        },
    }
    params = []
    for name, conv in rule._converters.items():
        params.append(
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": PARAM_TYPES.get(
                    type(conv).__name__.removesuffix("Converter").lower(), {"type": "string"}
                ),
            }
        )
    params += [{"name": n, "in": "query", "required": False, "schema": s} for n, s in spec.query]
    params += [{"name": n, "in": "header", "required": False, "schema": s} for n, s in spec.headers]
    if params:
        op["parameters"] = params
    if spec.body is not None:
        op["requestBody"] = {"required": spec.body_required, "content": {JSON: {"schema": spec.body}}}
    if admin:
        op["security"] = [{"adminPin": [], "csrf": []}, {"adminSession": [], "csrf": []}]
    elif changes:
        op["security"] = [{"csrf": []}]
    return op


def openapi_document(app: Flask) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every ``/api`` route of ``app``, from their specs."""
    cached = app.extensions.get("gizmos_openapi")
    if cached is not None:
        return cached
    paths: dict[str, Any] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if not rule.rule.startswith("/api/"):
            continue
        item = paths.setdefault(openapi_path(rule.rule), {})
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            item[method.lower()] = operation(app, rule.endpoint, method.lower(), rule)
    doc = {
        "openapi": "3.1.0",
        "info": {
            "title": "Gizmos Referee dashboard API",
            "version": "2",
            "description": "Everything the dashboard shows and does. Changes need the admin PIN "
            "(X-Admin-PIN) or an admin session, and the session's CSRF token (X-CSRF-Token). "
            "Generated from the schemas the server validates with (web/schemas.py). "
            "See docs/dashboard.md.",
        },
        "paths": paths,
        "components": {
            "schemas": COMPONENTS,
            "securitySchemes": {
                "adminPin": {"type": "apiKey", "in": "header", "name": "X-Admin-PIN"},
                "adminSession": {"type": "apiKey", "in": "cookie", "name": "session"},
                "csrf": {"type": "apiKey", "in": "header", "name": "X-CSRF-Token"},
            },
        },
    }
    app.extensions["gizmos_openapi"] = doc
    return doc
