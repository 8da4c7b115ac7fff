"""Small synchronous filesystem calls are low severity."""
import os
import os.path
from pathlib import Path


async def find_checkpoint(run_dir):
    if not os.path.exists(run_dir):  # expect: low os.path.exists
        return None
    size = os.stat(run_dir).st_size  # expect: low os.stat
    names = os.listdir(run_dir)  # expect: low os.listdir
    marker = Path(run_dir) / "done"
    return size, names, marker.exists()  # expect: low Path.exists
