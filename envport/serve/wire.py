"""Wire format between the verifier and a worker: typed envelopes, msgpack bodies.

Arrays travel as msgpack extension 1 (dtype, shape, raw bytes) so that a float32 port
observation arrives as float32: dtype is part of what is checked.
"""

from __future__ import annotations

from typing import Any, Literal

import msgpack
import numpy as np
from pydantic import BaseModel, ConfigDict

from envport.serve.answer_size import ANSWER_STR_BYTES, ANSWER_VALUES, measure

_NDARRAY = 1
# An array's header (its dtype and shape) is at most this long.
HEADER_BYTES = 4096
# Messages at least this big are handed to zmq without a copy.
ZERO_COPY_BYTES = 64 * 1024

Op = Literal[
    "ping",
    "load",
    "rollout",
    "step_batch",
    "holds",
    "step_tiled",
    "probe",
    "session_load",
    "session_step",
    "session_script",
    "session_read",
    "batch_vs_single",
    "state_api",
    "sample_noise",
    "reverse_reset",
    "reverse_rollout",
    "reset_samples",
    "reset_after",
    "sample_step",
    "vector_open",
    "vector_reset",
    "vector_load",
    "vector_step",
    "l4_train",
    "l4_evaluate",
    "bench",
    "load_reference",
    "play_reference",
    "describe",
    "cancel",
    "shutdown",
]


class Request(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    id: int
    op: Op
    args: dict[str, Any] = {}
    # `envport serve`'s shared secret (envport.serve.token); a local worker's channel has none.
    token: str = ""


class Response(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    id: int
    ok: bool
    result: Any = None
    # What went wrong in the port, in the port's own words (exception type and message).
    error: str | None = None
    detail: str | None = None


def _default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject or obj.dtype.names is not None:
            # Raw bytes of these would be pointers, or would lose the field names.
            raise TypeError(f"cannot send an array of dtype {obj.dtype} over the wire")
        # Not np.ascontiguousarray: it turns 0-d arrays into 1-d ones.
        array = obj if obj.flags.c_contiguous else obj.copy(order="C")
        header = msgpack.packb([array.dtype.str, list(array.shape)])
        return msgpack.ExtType(_NDARRAY, header + array.tobytes())
    if isinstance(obj, np.generic):
        return obj.item()
    if hasattr(obj, "__array__"):  # jax arrays and friends
        return _default(np.asarray(obj))
    raise TypeError(f"cannot send {type(obj).__name__} over the wire")


def _ext_hook(code: int, data: bytes) -> Any:
    if code != _NDARRAY:
        # Left as an ExtType it would reach a verifier as a value of no known kind.
        raise ValueError(f"msgpack extension type {code} is not one envport sends")
    # The sender may be a hostile port: whatever is wrong is one ValueError, and an object
    # dtype (pointers), a negative side (numpy would infer it) or a shape that is not a list
    # of integers (a string's letters would pass as an empty one) is wrong.
    try:
        # Only the header (dtype and shape, a few dozen bytes) is unpacked: fed the whole
        # payload, an Unpacker copies it and refuses one over its 100 MiB buffer (a batch
        # of chess states with their position history is more).
        unpacker = msgpack.Unpacker(max_buffer_size=HEADER_BYTES)
        unpacker.feed(data[:HEADER_BYTES])
        dtype, shape = next(unpacker)
        kind = np.dtype(dtype)
        if not isinstance(shape, list) or not all(type(side) is int for side in shape):
            raise ValueError(f"shape {shape!r} is not a list of integers")
        if kind.hasobject or kind.names is not None or any(side < 0 for side in shape):
            raise ValueError(f"dtype {kind} and shape {shape} cannot be sent")
        array = np.frombuffer(data[unpacker.tell() :], dtype=kind).reshape(shape)
    except (StopIteration, TypeError, ValueError, msgpack.UnpackException) as exc:
        raise ValueError(f"a malformed array arrived over the wire: {exc}") from None
    return array.copy()


def pack(message: BaseModel) -> bytes:
    return msgpack.packb(dict(message), default=_default, use_bin_type=True)


def unpack_request(data: bytes, values: int = ANSWER_VALUES) -> Request:
    """A request, decoded within the same limits as an answer: `envport serve` takes
    requests from a socket, so a small message of nested empty lists must not inflate."""
    return Request.model_validate(_bounded(data, values))


def unpack_response(data: bytes, values: int = ANSWER_VALUES) -> Response:
    """A worker's answer, decoded only once its headers show it within the driver's limits
    (`measure`: at most `values` values); over them, a `ValueError` naming the limit."""
    return Response.model_validate(_bounded(data, values))


def _bounded(data: bytes, values: int) -> Any:
    """One msgpack object, decoded only once its headers show it within `values` values
    (`measure`; over the limits a `ValueError` naming it)."""
    measure(data, values=values)
    # The same limits again, in msgpack's own terms: what the walk above let through.
    return msgpack.unpackb(
        data,
        ext_hook=_ext_hook,
        raw=False,
        max_str_len=ANSWER_STR_BYTES,
        max_bin_len=len(data),
        max_ext_len=len(data),
        max_array_len=values,
        max_map_len=values,
    )
