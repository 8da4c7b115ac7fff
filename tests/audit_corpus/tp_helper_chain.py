"""A blocking call two sync helpers deep; the finding is at the call, with its chain."""
import json


def _encode(payload):
    return json.dumps(payload)  # expect: high json.dumps


class Env:
    def _render(self, state):
        return _encode({"state": state})

    async def step(self, state):
        return self._render(state)
