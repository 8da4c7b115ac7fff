"""A worker's msgpack answer measured before it is decoded.

msgpack costs one byte per empty list and Python about 64 (the list and the pointer to
it): a 16 MB answer of `[[], [], ...]` decodes to a gigabyte of objects, and an array's
header makes the decoder allocate the room it declares before any element arrives. So the
driver first walks the bytes (`measure`: headers only, no object made) and refuses an
answer that holds too many values, nests too deep, declares a string, bytes or extension
longer than its limit, or ends early; only then does msgpack decode it. An array sent by
the port is one extension value, whatever its size: the bulk of a legitimate answer.
"""

from __future__ import annotations

import struct

# Values in one answer (every list, map, key, number, string and array counts one): a
# session script's or a probe batch's answers are thousands; this many empty lists are
# about 64 MB of Python objects.
ANSWER_VALUES = 1 << 20
# How deep lists and maps may nest (an answer is a list of dicts of arrays).
ANSWER_DEPTH = 64
# The longest string (a port's error message is one).
ANSWER_STR_BYTES = 16 << 20

# First byte -> (what follows, a number): "fixed" n more bytes; "array"/"map" n entries
# (-2, -4: the count is in the next 2 or 4 bytes); "str"/"bin"/"ext" a
# payload whose length is n (>= 0) or in the next 1, 2 or 4 bytes (-1, -2, -4).
_FORMAT: list[tuple[str, int]] = [("fixed", 0)] * 256
for _byte in range(0x80, 0x90):
    _FORMAT[_byte] = ("map", _byte & 0x0F)
for _byte in range(0x90, 0xA0):
    _FORMAT[_byte] = ("array", _byte & 0x0F)
for _byte in range(0xA0, 0xC0):
    _FORMAT[_byte] = ("str", _byte & 0x1F)
_FORMAT[0xC1] = ("never", 0)
for _byte, _entry in {
    0xC4: ("bin", -1),
    0xC5: ("bin", -2),
    0xC6: ("bin", -4),
    0xC7: ("ext", -1),
    0xC8: ("ext", -2),
    0xC9: ("ext", -4),
    0xCA: ("fixed", 4),
    0xCB: ("fixed", 8),
    0xCC: ("fixed", 1),
    0xCD: ("fixed", 2),
    0xCE: ("fixed", 4),
    0xCF: ("fixed", 8),
    0xD0: ("fixed", 1),
    0xD1: ("fixed", 2),
    0xD2: ("fixed", 4),
    0xD3: ("fixed", 8),
    0xD4: ("fixed", 2),
    0xD5: ("fixed", 3),
    0xD6: ("fixed", 5),
    0xD7: ("fixed", 9),
    0xD8: ("fixed", 17),
    0xD9: ("str", -1),
    0xDA: ("str", -2),
    0xDB: ("str", -4),
    0xDC: ("array", -2),
    0xDD: ("array", -4),
    0xDE: ("map", -2),
    0xDF: ("map", -4),
}.items():
    _FORMAT[_byte] = _entry
_NAMES = {
    "array": "a list",
    "map": "a map",
    "str": "a string",
    "bin": "a bytes value",
    "ext": "an extension value",
}
_LENGTH = {-1: struct.Struct(">B"), -2: struct.Struct(">H"), -4: struct.Struct(">I")}


class TooBig(ValueError):
    """An answer over one of the driver's limits, named with the limit."""


def measure(
    data: bytes | memoryview,
    values: int = ANSWER_VALUES,
    depth: int = ANSWER_DEPTH,
    str_bytes: int = ANSWER_STR_BYTES,
    bin_bytes: int | None = None,
) -> int:
    """The number of values in the one msgpack object `data` holds, read from its headers
    alone; `TooBig` past a limit, `ValueError` for bytes that are not one msgpack object.
    `bin_bytes` (default: the whole message) bounds a bytes or extension payload."""
    payload_limit = len(data) if bin_bytes is None else bin_bytes
    view = memoryview(data)
    size = len(view)
    position = 0
    counted = 0
    # Entries still to read in each open list or map, innermost last.
    open_counts = [1]
    while open_counts:
        if open_counts[-1] == 0:
            open_counts.pop()
            continue
        open_counts[-1] -= 1
        if position >= size:
            raise ValueError("the answer ends in the middle of a value")
        counted += 1
        if counted > values:
            raise TooBig(f"it holds more than {values} values (the driver's limit)")
        first = view[position]
        position += 1
        kind, number = _FORMAT[first]
        if kind == "fixed":
            position += number
            if position > size:
                raise ValueError("the answer ends in the middle of a value")
            continue
        if kind == "never":
            raise ValueError(f"byte 0x{first:02x} at {position - 1} is not msgpack")
        if number < 0:
            width = -number
            if position + width > size:
                raise ValueError("the answer ends in the middle of a header")
            number = _LENGTH[number].unpack_from(view, position)[0]
            position += width
        if kind in ("array", "map"):
            entries = number * 2 if kind == "map" else number
            if entries == 0:
                continue
            if entries > size - position:
                raise ValueError(
                    f"{_NAMES[kind]} declares {number} entries; {size - position} bytes remain"
                )
            if entries > values - counted:
                raise TooBig(
                    f"it holds more than {values} values (the driver's limit): "
                    f"{_NAMES[kind]} declares {number} entries after {counted} values"
                )
            # (The first entry of `open_counts` is the answer itself, not a list.)
            if len(open_counts) > depth:
                raise TooBig(f"lists and maps nest deeper than {depth} (the driver's limit)")
            open_counts.append(entries)
            continue
        limit = str_bytes if kind == "str" else payload_limit
        if number > limit:
            raise TooBig(f"{_NAMES[kind]} of {number} bytes is longer than the limit {limit}")
        # An extension's type byte comes before its payload.
        position += number + (1 if kind == "ext" else 0)
        if position > size:
            raise ValueError(f"the answer ends in the middle of {_NAMES[kind]}")
    if position != size:
        raise ValueError(f"{size - position} bytes follow the answer")
    return counted
