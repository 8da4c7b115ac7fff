"""A small env server mixing several findings, a suppressed one and an offloaded one."""
import asyncio
import copy
import json
import time


class EnvServer:
    def __init__(self, env):
        self.env = env

    def _snapshot(self):
        return copy.deepcopy(self.env)  # expect: high copy.deepcopy

    async def handle(self, message):
        request = json.loads(message)  # expect: high json.loads
        started = time.monotonic()
        time.sleep(0)  # envport: allow-blocking -- yields the GIL in a test double
        state = self._snapshot()
        obs = await asyncio.to_thread(self.env.step, request["action"])
        with open("/tmp/last-step", "w") as log:  # expect: high open
            log.write(str(time.monotonic() - started))
        return state, obs
