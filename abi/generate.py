#!/usr/bin/env python3
"""Describes the C ABI (abi/describe.py) and writes every binding's generated
per-verb layer from that description (abi/gen_<language>.py).

    abi/generate.py           rewrite the description and the generated files
    abi/generate.py --check   fail if any of them is stale (scripts/test.sh)
"""

import json
import sys
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import describe  # noqa: E402
from gen_cpp import CppGen  # noqa: E402
from gen_go import GoGen  # noqa: E402
from gen_node import NodeGen  # noqa: E402

ROOT = HERE.parent
BACKENDS = [NodeGen, GoGen, CppGen]


def main():
    check = "--check" in sys.argv
    desc, problems = describe.describe()
    for p in problems:
        print(f"abi/describe.py: {p}", file=sys.stderr)
    if problems:
        return 1
    overlay = json.loads(describe.OVERLAY.read_text())
    files = {str(describe.OUT.relative_to(ROOT)): json.dumps(desc, indent=1) + "\n"}
    for backend in BACKENDS:
        files.update(backend(desc, overlay).generate())
    stale = []
    for rel, text in files.items():
        path = ROOT / rel
        if path.exists() and path.read_text() == text:
            continue
        if check:
            stale.append(rel)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"abi/generate.py: wrote {rel}")
    if stale:
        print("stale generated files (run abi/generate.py and commit them): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
