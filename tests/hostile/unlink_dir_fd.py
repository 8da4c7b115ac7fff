# where: import
# Delete a file of the port's own directory through a directory descriptor.
import os

_fd = os.open(os.path.dirname(os.path.abspath(__file__)), os.O_RDONLY)
os.unlink("__init__.py", dir_fd=_fd)
