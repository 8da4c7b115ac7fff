"""Blocking work handed to a thread: functions passed, not called."""
# expect: none
import asyncio
import copy
import functools
import json
import time

import requests


def load_state(path):
    with open(path) as handle:
        return json.load(handle)


async def step(url, path, state):
    await asyncio.to_thread(time.sleep, 1)
    response = await asyncio.to_thread(requests.get, url, timeout=5)
    loaded = await asyncio.to_thread(load_state, path)
    cloned = await asyncio.to_thread(functools.partial(copy.deepcopy, state))
    slow = await asyncio.to_thread(lambda: json.dumps(state))
    return response, loaded, cloned, slow
