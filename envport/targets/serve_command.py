"""`envport serve`: run a reference or a port behind an address, for running one side
elsewhere (`envport verify ... --port-server ADDRESS` uses a served port)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

from envport.errors import EnvportError
from envport.serve.ops import LoadReference, Op
from envport.serve.server import MAX_REQUEST_BYTES, EnvServer
from envport.serve.token import TOKEN_VARIABLE, server_token
from envport.spec import load_spec, spec_path
from envport.targets.registry import TARGET_CHOICES, load_request, port_dir


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", help="serve a reference or a port over ZMQ")
    p.add_argument("spec", help="envport.toml or the directory holding it")
    side = p.add_mutually_exclusive_group(required=True)
    side.add_argument("--reference", action="store_true", help="serve the reference env")
    side.add_argument("--port", type=Path, help="serve this port directory (sandboxed)")
    p.add_argument("--address", required=True, help="e.g. tcp://127.0.0.1:5555")
    p.add_argument("--target", default="auto", choices=TARGET_CHOICES)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="worker processes")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    p.add_argument("--stats", type=Path, help="write served count, restarts and lag as JSON")
    p.add_argument(
        "--max-request-bytes",
        type=int,
        default=MAX_REQUEST_BYTES,
        help="refuse a request larger than this (default 1 GiB); its sender is disconnected",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.address.startswith(("tcp://", "ipc://")):
        raise EnvportError(f"--address {args.address!r}: expected tcp://HOST:PORT or ipc://PATH")
    if args.workers < 1:
        raise EnvportError("--workers: expected a positive number of worker processes")
    if args.max_request_bytes < 1:
        raise EnvportError("--max-request-bytes: expected a positive number of bytes")
    token, made = server_token()
    spec = load_spec(args.spec)
    preload: Op
    if args.reference:
        what = "the reference"
        preload = LoadReference(spec=str(spec_path(args.spec).resolve()))
    else:
        if not port_dir(spec, args.port).is_dir():  # a variant's may be its base's
            raise EnvportError(f"{args.port}: no such port directory")
        what = f"port {args.port}"
        preload = load_request(spec, args.port, args.target)
    # The spec's folder holds its harness files (the probes a client's requests name), a
    # variant's base folders those it takes from them.
    harness = list(spec.folders)
    server = EnvServer(
        args.address,
        args.workers,
        preload,
        token,
        timeout=args.timeout,
        readable=harness,
        max_request_bytes=args.max_request_bytes,
    )
    print(f"serving {what} at {args.address} with {args.workers} workers; SIGTERM or Ctrl-C stops")
    if made:
        # Printed this once, for the user to hand to clients; never written anywhere else.
        print(f"token: {token}  (clients: export {TOKEN_VARIABLE}=<token>)", flush=True)
    else:
        print(f"token: from {TOKEN_VARIABLE}", flush=True)
    summary = asyncio.run(server.serve())
    print(f"served {server.served} requests, {server.restarts} worker restarts; {summary.line()}")
    if args.stats:
        stats = {"served": server.served, "restarts": server.restarts, "lag": summary.model_dump()}
        args.stats.write_text(json.dumps(stats, indent=2), encoding="utf-8")
    return 0
