"""A lambda handed to sorted runs inline on the event loop."""
import json


async def canonical(records):
    return sorted(records, key=lambda record: json.dumps(record))  # expect: high json.dumps
