"""re.compile inside a for loop, a while loop and a comprehension."""
import re


async def match_all(patterns, lines):
    found = []
    for pattern in patterns:
        regex = re.compile(pattern)  # expect: medium re.compile
        found += [line for line in lines if regex.search(line)]
    while lines:
        if re.compile(lines.pop()).match("x"):  # expect: medium re.compile
            break
    return found + [re.compile(p) for p in patterns]  # expect: medium re.compile
