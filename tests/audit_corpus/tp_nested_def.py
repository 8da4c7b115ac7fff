"""A nested sync def is followed when the async function calls it."""
import time


async def serve(requests):
    def handle(request):
        time.sleep(0.01)  # expect: critical time.sleep
        return request

    return [handle(request) for request in requests]
