"""CPU-heavy loops: nested comprehensions and literal ranges of 100,000 or more."""


async def pairwise(batch):
    distances = [abs(a - b) for a in batch for b in batch]  # expect: medium comprehension
    grid = [[cell * 2 for cell in row] for row in batch]  # expect: medium comprehension
    table = {i: i * i for i in range(1_000_000)}  # expect: medium comprehension
    total = 0
    for i in range(200_000):  # expect: medium loop
        total += i
    return distances, grid, table, total
