"""A local fake model API for tests: Anthropic Messages and OpenAI Chat Completions.

The real SDKs talk to it through their base_url, so tests exercise the SDKs' own request
building, response parsing and error classes. Answers come from a script (a queue shared by
both endpoints) so a test states exactly what the "model" does, including faults.

    with FakeAPI() as api:
        api.script(["first", RateLimited(retry_after=0.01), Answer("second", output_tokens=3)])
        model = load_model("openai:fake-model", base_url=api.openai_base_url, api_key="sk-test")
        ...
        assert api.hits["openai"] == 3
        api.requests[-1].body["messages"]

When the script is empty the server calls `responder(flavour, body)` if one is set (later
whole-run tests answer from the prompt), otherwise it answers HTTP 400 "script exhausted",
which the client does not retry, so a test that makes one call too many fails at once.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Flavour = Literal["anthropic", "openai"]

ENDPOINTS: dict[str, Flavour] = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "openai",
}


@dataclass
class Answer:
    """A successful completion. Token counts default to rough sizes of the texts."""

    text: str
    stop: Literal["end", "max_tokens"] = "end"
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    model: str | None = None  # reported model id; defaults to the requested one


def Truncated(text: str, **kwargs: Any) -> Answer:
    """An answer cut off by max_tokens (stop_reason max_tokens / finish_reason length)."""
    return Answer(text, stop="max_tokens", **kwargs)


@dataclass
class RateLimited:
    """HTTP 429 with a retry-after header (seconds, fractions allowed so tests stay fast)."""

    retry_after: float | None = 0.01


@dataclass
class ServerError:
    status: int = 500


@dataclass
class Unauthorized:
    """HTTP 401 whose message echoes the credential it was given, as some servers do.

    Echoing it lets a test prove envport scrubs keys from errors it builds.
    """


@dataclass
class Status:
    """Any other error status with a message, e.g. 400 prompt too long, 404 unknown model."""

    status: int
    message: str = "error"


@dataclass
class Slow:
    """Wait `delay` seconds before answering, to run past the client's timeout."""

    delay: float
    then: Answer = field(default_factory=lambda: Answer("slow answer"))


@dataclass
class Malformed:
    """HTTP 200 with a body that is not JSON."""

    body: str = '{"id": "broken", "content": [ this is not json'


@dataclass
class Silent:
    """Read the request and never answer (until the server stops): a hung server."""


@dataclass
class Trickle:
    """Send the status line and headers at once, then the body one byte every `interval`
    seconds: each read finishes well inside any per-read timeout, the answer never does."""

    interval: float = 0.5
    then: Answer = field(default_factory=lambda: Answer("trickled answer " * 20))


@dataclass
class Mangled:
    """A normal completion with fields replaced: `changes` maps a dotted path into the
    provider's body ("usage.output_tokens", "choices.0.message.content", "content.0.text")
    to the value it gets, so a test states exactly which field is odd."""

    answer: Answer | str
    changes: dict[str, Any]


Scripted = (
    Answer
    | RateLimited
    | ServerError
    | Unauthorized
    | Status
    | Slow
    | Malformed
    | Silent
    | Trickle
    | Mangled
)
Responder = Callable[[Flavour, dict[str, Any]], "Scripted | str"]


@dataclass
class RecordedRequest:
    flavour: Flavour
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON, or the raw text when it was not JSON


class FakeAPI:
    """A threaded HTTP server on 127.0.0.1 with a random free port; use as a context manager."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.responder = responder
        self.hits: Counter[str] = Counter()
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeAPI:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in Slow
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what tests use ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "FakeAPI is not started"
        return int(self._server.server_address[1])

    @property
    def anthropic_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def base_url(self, flavour: Flavour) -> str:
        return self.anthropic_base_url if flavour == "anthropic" else self.openai_base_url

    def script(self, items: Iterable[Scripted | str]) -> None:
        """Append answers or faults to the queue; a plain string is a normal answer."""
        with self._lock:
            self._queue.extend(Answer(i) if isinstance(i, str) else i for i in items)

    @property
    def pending(self) -> int:
        """Scripted items not yet consumed."""
        with self._lock:
            return len(self._queue)

    @property
    def total_hits(self) -> int:
        return sum(self.hits.values())

    # --- internals ---------------------------------------------------------------------------

    def _next(self, flavour: Flavour, body: Any) -> Scripted | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None and isinstance(body, dict):
            item = self.responder(flavour, body)
            return Answer(item) if isinstance(item, str) else item
        return None


def _make_handler(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            flavour = ENDPOINTS.get(self.path.split("?", 1)[0])
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw
            if flavour is None:
                self._send(404, {"error": {"type": "not_found", "message": f"no {self.path}"}})
                return
            headers = {name.lower(): value for name, value in self.headers.items()}
            with api._lock:
                api.hits[flavour] += 1
                api.requests.append(RecordedRequest(flavour, self.path, headers, body))
            item = api._next(flavour, body)
            # The client may have given up (timeout); then there is no one to answer.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                self._answer(flavour, body, item)

        def _answer(self, flavour: Flavour, body: Any, item: Scripted | None) -> None:
            if item is None:
                self._error(flavour, 400, "invalid_request_error", "fake_api: script exhausted")
            elif isinstance(item, Slow):
                if api._stopping.wait(item.delay):
                    return
                self._answer(flavour, body, item.then)
            elif isinstance(item, RateLimited):
                headers = {}
                if item.retry_after is not None:
                    headers["retry-after"] = f"{item.retry_after:g}"
                self._error(flavour, 429, "rate_limit_error", "rate limited", headers)
            elif isinstance(item, ServerError):
                self._error(flavour, item.status, "api_error", "internal server error")
            elif isinstance(item, Unauthorized):
                credential = self.headers.get("x-api-key") or self.headers.get("authorization")
                self._error(flavour, 401, "authentication_error", f"invalid key: {credential}")
            elif isinstance(item, Status):
                self._error(flavour, item.status, "invalid_request_error", item.message)
            elif isinstance(item, Malformed):
                self._send_raw(200, item.body.encode(), {})
            elif isinstance(item, Silent):
                api._stopping.wait()
            elif isinstance(item, Trickle):
                payload = _completion(flavour, body if isinstance(body, dict) else {}, item.then)
                self._trickle(json.dumps(payload).encode(), item.interval)
            elif isinstance(item, Mangled):
                answer = Answer(item.answer) if isinstance(item.answer, str) else item.answer
                payload = _completion(flavour, body if isinstance(body, dict) else {}, answer)
                for path, value in item.changes.items():
                    _replace(payload, path, value)
                self._send(200, payload)
            else:
                payload = _completion(flavour, body if isinstance(body, dict) else {}, item)
                self._send(200, payload)

        def _error(
            self,
            flavour: Flavour,
            status: int,
            kind: str,
            message: str,
            headers: dict[str, str] | None = None,
        ) -> None:
            if flavour == "anthropic":
                payload: dict[str, Any] = {
                    "type": "error",
                    "error": {"type": kind, "message": message},
                }
            else:
                payload = {"error": {"message": message, "type": kind, "param": None, "code": None}}
            self._send(status, payload, headers)

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            self._send_raw(status, json.dumps(payload).encode(), headers or {})

        def _trickle(self, data: bytes, interval: float) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.flush()
            for index in range(len(data)):
                if api._stopping.wait(interval):
                    return
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()

        def _send_raw(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _replace(payload: Any, path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for part in parents:
        payload = payload[int(part)] if isinstance(payload, list) else payload[part]
    if isinstance(payload, list):
        payload[int(last)] = value
    else:
        payload[last] = value


def _completion(flavour: Flavour, request: dict[str, Any], answer: Answer) -> dict[str, Any]:
    model = answer.model or request.get("model") or "fake-model"
    input_tokens = answer.input_tokens
    if input_tokens is None:
        input_tokens = max(1, len(json.dumps(request.get("messages", []))) // 4)
    output_tokens = answer.output_tokens
    if output_tokens is None:
        output_tokens = max(1, len(answer.text) // 4)
    if flavour == "anthropic":
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": answer.text}],
            "stop_reason": "end_turn" if answer.stop == "end" else "max_tokens",
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": answer.cache_write_tokens,
                "cache_read_input_tokens": answer.cache_read_tokens,
            },
        }
    # OpenAI counts cached tokens inside prompt_tokens.
    prompt_tokens = input_tokens + answer.cache_read_tokens
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer.text},
                "finish_reason": "stop" if answer.stop == "end" else "length",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": prompt_tokens + output_tokens,
            "prompt_tokens_details": {"cached_tokens": answer.cache_read_tokens},
        },
    }
