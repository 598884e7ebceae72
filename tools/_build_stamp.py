"""Prints a digest of everything the compiled build depends on (used by tools/_venv.sh).

The build is current when this digest equals the one recorded after the last
`pip install -e .` and the compiled modules still load under LGEMBED_EXTENSIONS=required:
then the quick-start commands reuse `.venv` instead of recompiling every extension.
"""

import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tuple(path: Path, name: str) -> list[str]:
    m = re.search(rf"^{name} = \((.*?)\)", path.read_text(), re.S | re.M)
    return re.findall(r'"([^"]+)"', m.group(1)) if m else []


def main() -> None:
    files = [ROOT / "setup.py", ROOT / "pyproject.toml"]
    files += sorted((ROOT / "lgembed").rglob("*.pxd"))
    files += [ROOT / (m.replace(".", "/") + ".py") for m in _tuple(ROOT / "lgembed" / "_engine.py", "ENGINE")]
    h = hashlib.sha256(" ".join(sys.argv[1:]).encode())
    for f in files:
        h.update(str(f.relative_to(ROOT)).encode() + b"\0")
        h.update(f.read_bytes() if f.exists() else b"<missing>")
    print(h.hexdigest())


if __name__ == "__main__":
    main()
