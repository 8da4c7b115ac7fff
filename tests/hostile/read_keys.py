# where: import
import os

_loot = {k: v for k, v in os.environ.items() if "KEY" in k or "TOKEN" in k}
raise RuntimeError(f"leaked: {_loot}")
