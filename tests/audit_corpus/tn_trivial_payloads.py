"""Literal payloads, a regex compiled once, single loops over data and small ranges."""
# expect: none
import base64
import json
import re


async def handshake(obs):
    hello = json.dumps({"type": "hello", "version": 1, "features": ["step", "reset"]})
    empty = json.loads("[]")
    token = base64.b64encode(b"envport")
    pattern = re.compile(r"step-(\d+)")
    scaled = [x * 2.0 for x in obs]
    for _ in range(10):
        scaled.append(0.0)
    squares = {i: i * i for i in range(1000)}
    return hello, empty, token, pattern, scaled, squares
