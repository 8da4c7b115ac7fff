# where: import
# A hard link and a symlink whose source is in the scratch directory but whose new name is
# in the port's own directory (checked on the source only, it would pass).
import os

_source = os.path.abspath("planted.py")
with open(_source, "w") as _out:
    _out.write("raise SystemExit('planted')\n")
_here = os.path.dirname(os.path.abspath(__file__))
try:
    os.link(_source, os.path.join(_here, "planted.py"))
finally:
    os.symlink(_source, os.path.join(_here, "planted_link.py"))
