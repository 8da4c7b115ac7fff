"""Names that look like blocking calls but are bound to something else."""
# expect: none
import asyncio
import copy
import json
import time
from asyncio import sleep

from aiofiles import open


def deepcopy(state):
    return state


async def step(json, state, path):
    await sleep(1)
    payload = json.dumps(state)
    async with open(path) as handle:
        text = await handle.read()
    return payload, text, deepcopy(state)


async def tick(time):
    time.sleep(1)
    await asyncio.sleep(0)
