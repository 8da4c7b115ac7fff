"""Blocking DNS and reading stdin."""
import socket


async def resolve_and_ask(host):
    address = socket.gethostbyname(host)  # expect: critical socket.gethostbyname
    answer = input("continue? ")  # expect: critical input
    return address, answer
