"""`from time import sleep as zz` is resolved back to time.sleep."""
from time import sleep as zz


async def wait_for_worker(delay):
    zz(delay)  # expect: critical time.sleep
