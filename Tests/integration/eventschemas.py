"""The Matrix specification's own event schemas (the YAML JSON Schemas kept unchanged in
Tests/integration/spec), as a check of any event a test reads back."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import referencing
import yaml

SCHEMAS = Path(__file__).resolve().parent / "spec" / "event-schemas"
BASE = "https://spec.matrix.org/event-schemas/"


def _retrieve(uri: str) -> referencing.Resource:
    assert uri.startswith(BASE), uri
    contents = yaml.safe_load((SCHEMAS / uri[len(BASE):]).read_text())
    return referencing.Resource.from_contents(contents, default_specification=referencing.jsonschema.DRAFT202012)


REGISTRY = referencing.Registry(retrieve=_retrieve)


def validator(msgtype: str) -> jsonschema.Draft202012Validator:
    """The spec's schema for an `m.room.message` of `msgtype`, its references resolved in the spec's files."""
    return jsonschema.Draft202012Validator({"$ref": f"{BASE}m.room.message${msgtype}.yaml"}, registry=REGISTRY)


def schema_errors(event: dict) -> list[str]:
    found = validator(event["content"]["msgtype"]).iter_errors(event)
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in found]
