# where: import
import socket

socket.create_connection(("127.0.0.1", 9), timeout=2)
