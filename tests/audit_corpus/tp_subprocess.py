"""Child processes waited for on the event loop."""
import os
import subprocess
from subprocess import check_output


async def build_port(path):
    subprocess.run(["cargo", "build"], cwd=path, check=True)  # expect: critical subprocess.run
    version = check_output(["rustc", "--version"])  # expect: critical subprocess.check_output
    proc = subprocess.Popen(["true"])  # expect: critical subprocess.Popen
    os.system("sync")  # expect: critical os.system
    return version, proc
