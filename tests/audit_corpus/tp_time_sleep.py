"""Plain time.sleep in an async step."""
import time


async def step(action):
    time.sleep(0.1)  # expect: critical time.sleep
    return action
