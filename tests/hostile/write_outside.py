# where: import
import os

with open(os.path.expanduser("~/pwned.txt"), "w") as _out:
    _out.write("envport was here")
