"""Blocking calls in sync code that no async function calls are not findings."""
# expect: none
import copy
import json
import subprocess
import time


def build():
    subprocess.run(["make"], check=True)
    time.sleep(1)


class Cache:
    def save(self, path, state):
        with open(path, "w") as handle:
            json.dump(copy.deepcopy(state), handle)


async def status():
    return "ok"
