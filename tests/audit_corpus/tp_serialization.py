"""Serialisation of payloads that are not literals."""
import base64
import json
import pickle

import msgpack


async def encode_step(obs, reward, frame, message):
    body = json.dumps({"obs": obs, "reward": reward})  # expect: high json.dumps
    parsed = json.loads(message)  # expect: high json.loads
    blob = pickle.dumps(obs)  # expect: high pickle.dumps
    image = base64.b64encode(frame)  # expect: high base64.b64encode
    packed = msgpack.packb(obs)  # expect: high msgpack.packb
    return body, parsed, blob, image, packed
