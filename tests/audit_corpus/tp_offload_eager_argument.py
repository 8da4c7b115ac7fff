"""The arguments of an offload call are evaluated on the loop: this one blocks anyway."""
import asyncio
import json


async def encode(obs):
    return await asyncio.to_thread(print, json.dumps(obs))  # expect: high json.dumps
