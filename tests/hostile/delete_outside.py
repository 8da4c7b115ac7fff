# where: import
import os

os.remove(os.path.expanduser("~/keep.txt"))
