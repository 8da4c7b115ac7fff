"""This variant's kwargs: natural=True, sab=False (a winning natural pays 1.5). Laid over
examples/blackjack's port, whose every other file this port takes as it is there."""

NATURAL, SAB = True, False
