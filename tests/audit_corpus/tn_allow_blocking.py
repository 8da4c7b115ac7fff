"""Every blocking line is silenced with the allow comment, including a helper call."""
# expect: none
import json
import time


def warm_up():
    time.sleep(1)


async def start(config):
    time.sleep(0.1)  # envport: allow-blocking -- once at start-up, before any rollout
    warm_up()  # envport: allow-blocking
    return json.loads(  # envport: allow-blocking
        config
    )
