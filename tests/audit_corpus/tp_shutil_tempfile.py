"""shutil and tempfile: every call touches the disk."""
import shutil
import tempfile


async def fresh_scratch(old):
    shutil.rmtree(old, ignore_errors=True)  # expect: high shutil.rmtree
    scratch = tempfile.mkdtemp(prefix="envport-")  # expect: high tempfile.mkdtemp
    shutil.copytree("template", scratch, dirs_exist_ok=True)  # expect: high shutil.copytree
    return scratch
