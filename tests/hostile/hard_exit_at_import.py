# where: import
import os

os._exit(0)
