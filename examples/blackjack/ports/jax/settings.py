"""The reference's kwargs this port plays by: Blackjack-v1 is registered with sab=True,
natural=False. A variant of this example (examples/blackjack-natural) lays its own
settings.py over this one and takes every other file of the port from here."""

NATURAL, SAB = False, True
