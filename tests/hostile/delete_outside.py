# where: import
# The user's home, found by its place: a worker's HOME is its own scratch (the test lays
# the home out beside the spec, <tmp>/home and <tmp>/cartpole/ports/numpy).
import os

_home = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "home")
os.remove(os.path.join(_home, "keep.txt"))
