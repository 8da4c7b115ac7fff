"""The builtin open, in a with statement and inline."""


async def save_transcript(path, text):
    with open(path, "w") as handle:  # expect: high open
        handle.write(text)
    return open(path).read()  # expect: high open
