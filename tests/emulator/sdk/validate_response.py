#!/usr/bin/env python3
"""Validate nucleo-emulator answers (non-streamed response bodies) against the providers' published
response schemas in ../shared/specs, the way ../shared/tools/validate_wire.py checks requests.

usage: validate_response.py SPECS_DIR KIND RESPONSE.json [...]
  anthropic:       Message from anthropic-openapi.yml (OpenAPI 3.1, jsonschema)
  openai:          CreateChatCompletionResponse from openai-openapi.yaml (OpenAPI 3.1, jsonschema)
  bedrock:         the ConverseResponse output shape of bedrock-runtime-service-2.json (botocore's
                   model format), walked member by member: required members present, no unknown
                   member, every scalar of its shape's type, enums honoured, a union holding
                   exactly one member.
  anthropic-stream: one server-sent event's data against MessageStreamEvent
  openai-stream:   one `data:` chunk against CreateChatCompletionStreamResponse
  anthropic-error: ErrorResponse from anthropic-openapi.yml
  openai-error:    ErrorResponse from openai-openapi.yaml
  bedrock-error:   {"shape": X-AMZN-ERRORTYPE, "body": BODY}: BODY against that exception shape of
                   the Bedrock model (which must be an error the service declares)
Exit 0 when every file is valid; 1 with one line per problem otherwise.
"""
import json, os, sys, functools


def _honour_nullable(node):
    """OpenAPI 3.0's `nullable: true`, which some 3.1 documents still use (OpenAI's stream chunks:
    `finish_reason`, `logprobs`, `usage`), means "or null"; JSON Schema ignores the keyword, so it
    is rewritten as `anyOf: [the schema, {type: null}]`."""
    if isinstance(node, list):
        return [_honour_nullable(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _honour_nullable(v) for k, v in node.items()}
    if out.get("nullable") is True:  # the keyword, not a property that happens to be so named
        del out["nullable"]
        return {"anyOf": [out, {"type": "null"}]}
    return out


@functools.lru_cache(None)
def _openapi(path):
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path) as f:
        return _honour_nullable(yaml.load(f, Loader=loader))


def _schema_errors(spec_path, schema_name, body):
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    import referencing.jsonschema
    root = Resource.from_contents(_openapi(spec_path),
                                  default_specification=referencing.jsonschema.DRAFT202012)
    registry = Registry().with_resource("urn:spec", root)
    v = Draft202012Validator({"$ref": "urn:spec#/components/schemas/" + schema_name},
                             registry=registry)
    out = []
    for e in sorted(v.iter_errors(body), key=lambda e: list(e.absolute_path)):
        path = "/".join(str(p) for p in e.absolute_path)
        msg = e.message if len(e.message) < 300 else e.message[:300] + "..."
        out.append(f"{path or '<root>'}: {msg}")
    return out


def _shape_errors(shapes, name, value, path, out):
    shape = shapes[name]
    if shape.get("document"):
        return  # a document (a tool's input) holds any JSON value
    kind = shape["type"]
    where = path or "<root>"
    if kind == "structure":
        if not isinstance(value, dict):
            out.append(f"{where}: expected an object for {name}")
            return
        members = shape.get("members", {})
        for key in value:
            if key not in members:
                out.append(f"{where}: member {key!r} is not in {name}")
        for key in shape.get("required", []):
            if key not in value:
                out.append(f"{where}: required member {key!r} of {name} is missing")
        present = [k for k in value if k in members]
        if shape.get("union") and len(present) != 1:
            out.append(f"{where}: union {name} must hold exactly one member, holds {present}")
        for key in present:
            _shape_errors(shapes, members[key]["shape"], value[key], f"{path}.{key}" if path else key, out)
    elif kind == "list":
        if not isinstance(value, list):
            out.append(f"{where}: expected a list for {name}")
            return
        for i, item in enumerate(value):
            _shape_errors(shapes, shape["member"]["shape"], item, f"{path}[{i}]", out)
    elif kind == "map":
        if not isinstance(value, dict):
            out.append(f"{where}: expected a map for {name}")
            return
        for k, item in value.items():
            _shape_errors(shapes, shape["value"]["shape"], item, f"{path}.{k}", out)
    elif kind == "string":
        if not isinstance(value, str):
            out.append(f"{where}: expected a string for {name}")
        elif "enum" in shape and value not in shape["enum"]:
            out.append(f"{where}: {value!r} is not one of {name} {shape['enum']}")
    elif kind in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            out.append(f"{where}: expected an integer for {name}")
        elif "min" in shape and value < shape["min"]:
            out.append(f"{where}: {value} is below the minimum {shape['min']} of {name}")
    elif kind in ("double", "float"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            out.append(f"{where}: expected a number for {name}")
    elif kind == "boolean":
        if not isinstance(value, bool):
            out.append(f"{where}: expected a boolean for {name}")
    # document, blob and timestamp: any JSON value is accepted


def _bedrock_errors(spec_path, body):
    with open(spec_path) as f:
        model = json.load(f)
    shapes = model["shapes"]
    out = []
    _shape_errors(shapes, model["operations"]["Converse"]["output"]["shape"], body, "", out)
    return out


def _bedrock_error_errors(spec_path, wrapped):
    with open(spec_path) as f:
        shapes = json.load(f)["shapes"]
    name = wrapped.get("shape")
    if name not in shapes or not shapes[name].get("exception"):
        return [f"<root>: {name!r} is not an error shape of the Bedrock model"]
    out = []
    _shape_errors(shapes, name, wrapped.get("body"), "", out)
    return out


def validate(specs, provider, body):
    if provider == "anthropic":
        return _schema_errors(os.path.join(specs, "anthropic-openapi.yml"), "Message", body)
    if provider == "openai":
        return _schema_errors(os.path.join(specs, "openai-openapi.yaml"),
                              "CreateChatCompletionResponse", body)
    if provider == "bedrock":
        return _bedrock_errors(os.path.join(specs, "bedrock-runtime-service-2.json"), body)
    if provider == "anthropic-stream":
        return _schema_errors(os.path.join(specs, "anthropic-openapi.yml"), "MessageStreamEvent",
                              body)
    if provider == "openai-stream":
        return _schema_errors(os.path.join(specs, "openai-openapi.yaml"),
                              "CreateChatCompletionStreamResponse", body)
    if provider == "anthropic-error":
        return _schema_errors(os.path.join(specs, "anthropic-openapi.yml"), "ErrorResponse", body)
    if provider == "openai-error":
        return _schema_errors(os.path.join(specs, "openai-openapi.yaml"), "ErrorResponse", body)
    if provider == "bedrock-error":
        return _bedrock_error_errors(os.path.join(specs, "bedrock-runtime-service-2.json"), body)
    raise SystemExit(f"unknown kind {provider!r}: anthropic, openai, bedrock or KIND-error")


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    specs, provider, bad = argv[1], argv[2], 0
    for path in argv[3:]:
        with open(path) as f:
            body = json.load(f)
        errs = validate(specs, provider, body)
        for e in errs:
            print(f"{path}: {e}")
        bad += bool(errs)
    print(f"{len(argv) - 3 - bad} valid, {bad} invalid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
