"""What crosses from the sandbox to the grader: plain JSON, tensors as raw bytes.

The worker (untrusted: student code ran in it) encodes outputs with `encode`.
The grader accepts a reply only if it matches the strict schema below (types,
sizes, nesting depth), then rebuilds every tensor from its bytes, dtype and
shape with `torch.frombuffer`: no pickle, no student class, no tensor subclass
ever reaches the grading process, and a tensor whose bytes do not fit its
shape is refused rather than reshaped.

This file imports only torch, base64 and json, so the worker can load it too.
"""

import base64
import math

import torch

MAX_ELEMENTS = 100_000  # per tensor
MAX_ITEMS = 64  # per tuple, list or dict
MAX_DEPTH = 4  # nesting of tuples, lists and dicts inside one output
MAX_TEXT = 2000  # characters of a string value, a message, a traceback line...
MAX_REPLY_BYTES = 16 * 1024 * 1024
DTYPES = ("float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool")


class Unusable:
    """An output that could not be carried back (wrong type, too large, malformed...)."""

    def __init__(self, reason):
        self.reason = str(reason)[:500]

    def __repr__(self):
        return f"Unusable({self.reason!r})"


# --- the worker's side ---------------------------------------------------------------


def encode(value, depth=0):
    if isinstance(value, torch.Tensor):
        return _encode_tensor(value)
    if isinstance(value, (tuple, list, dict)) and depth >= MAX_DEPTH:
        return {"error": f"nested deeper than {MAX_DEPTH} levels"}
    if isinstance(value, (tuple, list)):
        if len(value) > MAX_ITEMS:
            return {"error": f"a {type(value).__name__} of {len(value)} items"}
        return {"seq": [encode(item, depth + 1) for item in value], "kind": "tuple" if isinstance(value, tuple) else "list"}
    if isinstance(value, dict):
        if len(value) > MAX_ITEMS or not all(isinstance(key, str) for key in value):
            return {"error": "dict too large or with non-string keys"}
        return {"dict": {key[:100]: encode(item, depth + 1) for key, item in value.items()}}
    if value is None or isinstance(value, (bool, int, float, str)):
        if type(value) is int and abs(value) > 2**62:
            return {"error": "integer too large"}
        if type(value) in (bool, int, float, str) or value is None:
            return {"value": value[:MAX_TEXT] if type(value) is str else value}
        # a subclass travels as the plain value, with its own type named (exact types are graded)
        return {"value": _plain(value)[:MAX_TEXT] if isinstance(value, str) else _plain(value), "type": _type_name(value)}
    plain = _numpy_scalar(value)
    if plain is not None:
        return {"value": plain, "type": _type_name(value)}
    return {"other": type(value).__name__[:100]}


def _type_name(value):
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"[:100]


def _numpy_scalar(value):
    """A numpy number (numpy.int64 is no subclass of int) as the plain bool, int or float it holds;
    None for anything else."""
    if type(value).__module__ != "numpy" or not callable(getattr(value, "item", None)):
        return None
    try:
        plain = value.item()
    except Exception:
        return None
    return plain if type(plain) in (bool, int, float) else None


def _plain(value):
    """A subclass of int, float or str as the plain built-in value."""
    for kind in (bool, int, float):
        if isinstance(value, kind):
            return kind(value)
    return str(value)


def _encode_tensor(value):
    dtype = str(value.dtype).replace("torch.", "")
    if dtype not in DTYPES:
        return {"error": f"a tensor of dtype {dtype}"}
    if value.numel() > MAX_ELEMENTS:
        return {"error": f"output too large: {tuple(value.shape)}"}
    flat = value.detach().to("cpu").contiguous().reshape(-1)
    raw = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
    return {"tensor": base64.b64encode(raw).decode("ascii"), "dtype": dtype, "shape": list(value.shape),
            "device": value.device.type}


# --- the grader's side ---------------------------------------------------------------


def _one_of_keys(branches):
    """An object that holds exactly one branch's key, checked against that branch alone.

    Unlike `oneOf`, which checks every branch and keeps every branch's errors (a reply built to
    fail all of them costs the grader memory in proportion to its size, times the branches, at
    every level), `if`/`then` on the branch key looks at one branch only."""
    keys = list(branches)
    return {"type": "object", "minProperties": 1, "anyOf": [{"required": [key]} for key in keys],
            "allOf": [{"if": {"required": [key]}, "then": schema} for key, schema in branches.items()]}


def _value_schema(depth):
    """The schema of an encoded value nested at most `depth` levels; inner levels by reference."""
    text = {"type": "string", "maxLength": MAX_TEXT}

    def only(*names, **properties):
        return {"additionalProperties": False, "required": list(names), "properties": properties}

    branches = {
        "tensor": only("tensor", "dtype", "shape", "device",
                       tensor={"type": "string", "maxLength": 4 * math.ceil(MAX_ELEMENTS * 8 / 3)},
                       dtype={"enum": list(DTYPES)},
                       shape={"type": "array", "maxItems": 8,
                              "items": {"type": "integer", "minimum": 0, "maximum": MAX_ELEMENTS}},
                       device={"enum": ["cpu", "cuda"]}),
        "value": only("value", value={"type": ["null", "boolean", "number", "string"], "maxLength": MAX_TEXT},
                      type={"type": "string", "maxLength": 100}),
        "error": only("error", error=text),
        "other": only("other", other=text),
    }
    if depth:
        inner = {"$ref": f"#/definitions/value{depth - 1}"}
        branches["seq"] = only("seq", "kind", seq={"type": "array", "maxItems": MAX_ITEMS, "items": inner},
                               kind={"enum": ["tuple", "list"]})
        branches["dict"] = only("dict", dict={"type": "object", "maxProperties": MAX_ITEMS,
                                              "propertyNames": {"maxLength": 100}, "additionalProperties": inner})
    return _one_of_keys(branches)


def _reply_schema():
    text = {"type": "string", "maxLength": 4 * MAX_TEXT}
    raised_properties = {"kind": {"enum": ["not_implemented", "exception"]}, "message": text, "type": text,
                         "traceback": text}
    raised = {"type": "object", "additionalProperties": False, "required": ["kind", "message"],
              "properties": raised_properties}
    value = {"$ref": f"#/definitions/value{MAX_DEPTH}"}
    # the names of the case's inputs the call left changed
    # and whose memory the output shares, and whether a second call gave another outcome (probes.run_all)
    names = {"type": "array", "maxItems": 20, "uniqueItems": True, "items": {"type": "string", "maxLength": 100}}
    contract = {"changed": names, "shares": names, "unsteady": {"const": True}}
    outcome = _one_of_keys({
        "ok": {"additionalProperties": False, "properties": {"ok": value, **contract}},
        "raised": {"additionalProperties": False, "properties": {"raised": raised, **contract}},
        "missing": {"additionalProperties": False, "properties": {"missing": {"const": True}}},
    })
    named = {"type": "object", "maxProperties": MAX_ITEMS, "propertyNames": {"maxLength": 100},
             "additionalProperties": outcome}
    problems = {"type": "array", "maxItems": 10, "items": text}
    exercise_body = {"additionalProperties": False, "required": ["devices", "outputs"],
                     "properties": {"devices": {"type": "array", "maxItems": 2, "uniqueItems": True,
                                                "items": {"enum": ["cpu", "cuda"]}},
                                    "outputs": {"type": "object", "additionalProperties": False,
                                                "properties": {"cpu": named, "cuda": named}},
                                    "load_problems": problems,
                                    "forbidden": {"type": "array", "maxItems": 10, "items": text}}}
    failure = {"type": "object", "additionalProperties": False, "required": ["cell", "kind", "message"],
               "properties": {"cell": {"type": "integer", "minimum": 0}, **raised_properties}}
    notebook_body = {"additionalProperties": False, "required": ["values", "cell_failures"],
                     "properties": {"values": named, "cell_failures": {"type": "array", "maxItems": 20, "items": failure},
                                    "load_problems": problems}}
    return {"$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {f"value{depth}": _value_schema(depth) for depth in range(MAX_DEPTH + 1)},
            **_one_of_keys({
        "body": {"additionalProperties": False, "properties": {
            "body": _one_of_keys({"outputs": exercise_body, "values": notebook_body}),
            "load_problems": problems}},
        "failed": {"additionalProperties": False, "properties": {"failed": raised, "load_problems": problems}},
    })}


MAX_NODES = 20_000  # JSON values in one reply: bounds the schema check's work whatever the reply holds


def _count_nodes(value, limit):
    """How many JSON values `value` holds, walking without recursion; stops past `limit`."""
    count, pending = 0, [value]
    while pending and count <= limit:
        item = pending.pop()
        count += 1
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return count


_validate = None


def parse_reply(data: bytes):
    """The reply's JSON if it is well-formed and matches the schema; raises ValueError otherwise.

    fastjsonschema (nbformat's own validator) compiles the schema to Python once: it imports
    in milliseconds where jsonschema takes over a second, and it stops at the first error."""
    global _validate
    import json

    import fastjsonschema

    if len(data) > MAX_REPLY_BYTES:
        raise ValueError(f"the reply is larger than {MAX_REPLY_BYTES} bytes")
    try:
        reply = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(f"the reply is not JSON ({type(exc).__name__})") from None
    if _count_nodes(reply, MAX_NODES) > MAX_NODES:
        raise ValueError(f"the reply holds more than {MAX_NODES} values")
    if _validate is None:
        _validate = fastjsonschema.compile(_reply_schema())
    try:
        _validate(reply)
    except fastjsonschema.JsonSchemaException as error:
        where = "/".join(str(part) for part in (error.path or [])[1:])[:200]
        raise ValueError(f"the reply does not match the schema at '{where}': {str(error.message)[:200]}") from None
    except (RecursionError, MemoryError):
        raise ValueError("the reply is nested too deeply") from None
    return reply


def decode(payload):
    """A schema-checked value as grader-side data; tensors come back on the CPU, built from bytes."""
    if "tensor" in payload:
        dtype = getattr(torch, payload["dtype"])
        shape = payload["shape"]
        try:
            raw = base64.b64decode(payload["tensor"], validate=True)
        except ValueError:
            return Unusable("a tensor whose data is not base64")
        count = math.prod(shape)
        itemsize = torch.empty((), dtype=dtype).element_size()
        if count > MAX_ELEMENTS or len(raw) != count * itemsize:
            return Unusable(f"a tensor whose {len(raw)} bytes do not fit its shape {shape} and dtype {payload['dtype']}")
        if not count:
            return torch.empty(shape, dtype=dtype)
        return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape).clone()
    if "seq" in payload:
        items = [decode(item) for item in payload["seq"]]
        return tuple(items) if payload["kind"] == "tuple" else items
    if "dict" in payload:
        return {key: decode(item) for key, item in payload["dict"].items()}
    if "value" in payload:
        return payload["value"]
    if "error" in payload:
        return Unusable(payload["error"])
    return Unusable(f"returned an object of type {payload['other']}")


def scalar_types_of(payload):
    """The types of the numbers and strings inside an encoded output that are not Python's own bool,
    int, float or str (a numpy.int64, a subclass of int), as the worker named them."""
    if "type" in payload:
        return {payload["type"]}
    items = payload.get("seq") or list(payload.get("dict", {}).values())
    return set().union(*(scalar_types_of(item) for item in items)) if items else set()


def devices_of(payload):
    """The devices of every tensor inside an encoded output."""
    if "tensor" in payload:
        return {payload["device"]}
    items = payload.get("seq") or list(payload.get("dict", {}).values())
    return set().union(*(devices_of(item) for item in items)) if items else set()
