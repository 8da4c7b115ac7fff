"""Property: arrays cross the worker wire with dtype, shape and every byte intact.

The wire (`envport/serve/wire.py`) sends an array as its dtype string, its shape and its
raw bytes, because dtype is part of what the levels check (a float32 port observation must
arrive as float32). Every plain dtype numpy has, either byte order, 0-d to 4-d, empty,
non-contiguous views, nested in dicts and lists, in requests and in responses. Arrays whose
bytes mean nothing elsewhere (object dtype: pointers) or whose dtype string loses
information (structured) are refused when packed; a malformed array from a (possibly
hostile) worker is one ValueError when unpacked.
"""

from __future__ import annotations

from typing import Any

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from envport.serve.wire import Request, Response, pack, unpack_request, unpack_response
from envport.verifiers.draws.hypo import keep_caches_out_of_cwd

# Hypothesis's own caches go under envport's cache, as in a verify run, not ./.hypothesis.
keep_caches_out_of_cwd()

plain_dtypes = st.one_of(
    hnp.boolean_dtypes(),
    hnp.integer_dtypes(endianness="?"),
    hnp.unsigned_integer_dtypes(endianness="?"),
    hnp.floating_dtypes(endianness="?", sizes=(16, 32, 64)),
    hnp.complex_number_dtypes(endianness="?"),
    hnp.datetime64_dtypes(endianness="?"),
    hnp.timedelta64_dtypes(endianness="?"),
    hnp.byte_string_dtypes(min_len=1, max_len=4),
    hnp.unicode_string_dtypes(endianness="?", min_len=1, max_len=4),
)
# Views a port's answer may well be: transposed, strided, reversed, or as made.
VIEWS = {
    "as made": lambda a: a,
    "transposed": lambda a: a.T,
    "every other": lambda a: a[::2] if a.ndim else a,
    "reversed": lambda a: a[::-1] if a.ndim else a,
    "fortran": lambda a: np.asfortranarray(a),
}


@st.composite
def arrays(draw: st.DrawFn) -> np.ndarray:
    array = draw(
        hnp.arrays(
            draw(plain_dtypes),
            hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4),
        )
    )
    return VIEWS[draw(st.sampled_from(sorted(VIEWS)))](array)


leaves = arrays() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text()
nested = st.recursive(
    leaves | st.none(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def same(sent: Any, arrived: Any) -> None:
    """Equal structure, and arrays equal in dtype, shape and bytes (NaN payloads and -0.0
    included, which `==` would not see)."""
    if isinstance(sent, np.ndarray):
        assert isinstance(arrived, np.ndarray)
        assert arrived.dtype == sent.dtype and arrived.dtype.str == sent.dtype.str
        assert arrived.shape == sent.shape
        assert arrived.tobytes() == np.ascontiguousarray(sent).tobytes()
        assert arrived.flags.writeable  # the levels may write into what they receive
    elif isinstance(sent, dict):
        assert isinstance(arrived, dict) and sent.keys() == arrived.keys()
        for key in sent:
            same(sent[key], arrived[key])
    elif isinstance(sent, list):
        assert isinstance(arrived, list) and len(arrived) == len(sent)
        for a, b in zip(sent, arrived, strict=True):
            same(a, b)
    else:
        assert arrived == sent and type(arrived) is type(sent)


@settings(max_examples=300, database=None, derandomize=True, deadline=None)
@given(array=arrays())
def test_an_array_arrives_with_its_dtype_shape_and_bytes(array: np.ndarray) -> None:
    arrived = unpack_response(pack(Response(id=7, ok=True, result=array)))
    assert arrived.id == 7 and arrived.ok
    same(array, arrived.result)


@settings(max_examples=150, database=None, derandomize=True, deadline=None)
@given(result=nested, args=st.dictionaries(st.text(max_size=5), nested, max_size=3))
def test_nested_arrays_arrive_in_requests_and_responses(result: Any, args: dict) -> None:
    same(result, unpack_response(pack(Response(id=1, ok=True, result=result))).result)
    request = unpack_request(pack(Request(id=2, op="step_batch", args=args)))
    assert request.op == "step_batch"
    same(args, request.args)


@settings(max_examples=100, database=None, derandomize=True, deadline=None)
@given(
    value=st.one_of(
        hnp.from_dtype(np.dtype("float32"), allow_nan=False),
        hnp.from_dtype(np.dtype("int64")),
        hnp.from_dtype(np.dtype("uint8")),
        hnp.from_dtype(np.dtype("bool")),
    )
)
def test_a_numpy_scalar_arrives_as_its_python_value(value: np.generic) -> None:
    arrived = unpack_response(pack(Response(id=1, ok=True, result=value))).result
    assert arrived == value.item() and type(arrived) is type(value.item())


@pytest.mark.parametrize(
    "array",
    [
        np.array([1, None], dtype=object),
        np.array([[{"a": 1}]], dtype=object),
        np.zeros(3, dtype=[("x", "<f4"), ("n", "<i2")]),
        np.zeros((2, 2), dtype=[("nested", [("y", "u1")])]),
    ],
    ids=["object", "object 2-d", "structured", "nested structured"],
)
def test_arrays_the_wire_cannot_carry_are_refused_when_packed(array: np.ndarray) -> None:
    with pytest.raises(TypeError, match="cannot send an array of dtype"):
        pack(Response(id=1, ok=True, result={"obs": [array]}))


def test_values_that_are_not_data_are_refused_when_packed() -> None:
    for value in [{1, 2}, object(), np.datetime64("2020-01-01")]:
        with pytest.raises(TypeError):
            pack(Response(id=1, ok=True, result=value))


# What a msgpack header can hold at all (a forger's bytes cannot say more).
MSGPACK_INTEGERS = st.integers(-(2**63), 2**64 - 1)


def _forged(data: bytes) -> bytes:
    return msgpack.packb({"id": 1, "ok": True, "result": msgpack.ExtType(1, data)})


@settings(max_examples=300, database=None, derandomize=True, deadline=None)
@given(
    dtype=st.one_of(
        st.sampled_from(["|O", "O", "|V0", "<U0", "zz", "[('a','<f4')]", "<f8", "|b1", ">i2"]),
        plain_dtypes.map(lambda d: d.str),
        MSGPACK_INTEGERS,
        st.none(),
    ),
    shape=st.one_of(
        st.lists(st.integers(-3, 2**40), max_size=4), st.text(max_size=3), MSGPACK_INTEGERS
    ),
    payload=st.binary(max_size=64),
    header_too=st.booleans(),
)
def test_a_forged_array_is_one_value_error_or_a_consistent_array(
    dtype: Any, shape: Any, payload: bytes, header_too: bool
) -> None:
    """What a hostile port could write to its socket: never an object array, never a crash
    other than ValueError, and an array that arrives has exactly the bytes that came."""
    data = (msgpack.packb([dtype, shape]) if header_too else b"") + payload
    try:
        arrived = unpack_response(_forged(data)).result
    except ValueError as error:
        assert "malformed array" in str(error)
        return
    assert isinstance(arrived, np.ndarray) and not arrived.dtype.hasobject
    assert list(arrived.shape) == shape and arrived.dtype == np.dtype(dtype)
    assert arrived.nbytes == len(data) - len(msgpack.packb([dtype, shape]))


def test_an_array_over_msgpacks_buffer_limit_arrives_whole() -> None:
    # A batch of chess states with their position histories passes 100 MiB, msgpack's
    # default buffer: only the array's header is unpacked apart, never the whole payload.
    array = (np.arange(4097 * 3300 * 8) % 251).astype(np.uint8).reshape(4097, 3300, 8)
    assert array.nbytes > 100 * 2**20
    arrived = unpack_response(pack(Response(id=1, ok=True, result={"states": array})))
    assert np.array_equal(arrived.result["states"], array)
