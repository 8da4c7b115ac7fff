"""urllib, both imported as a module and by name."""
import urllib.request
from urllib.request import urlopen as fetch


async def download(url):
    raw = urllib.request.urlopen(url).read()  # expect: critical urllib.request.urlopen
    other = fetch(url)  # expect: critical urllib.request.urlopen
    return raw, other
