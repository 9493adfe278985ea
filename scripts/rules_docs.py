#!/usr/bin/env python3
"""Rewrite the generated parts of the player rules (docs/rules/<game>.md) from the engine.

Every number a player needs sits between ``<!-- generated: NAME -->`` and ``<!-- /generated -->``
(:mod:`engine.rules_doc`); this script fills those parts from each game's ``rules_doc.blocks()``.
``tests/engine/test_rules_docs.py`` fails while a file differs from what this would write.

    .venv/bin/python scripts/rules_docs.py            # rewrite the files that changed
    .venv/bin/python scripts/rules_docs.py --check    # exit 1 if a file would change
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.rules_doc import GENERATORS, fill  # noqa: E402

DOCS = ROOT / "docs" / "rules"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    args = ap.parse_args(argv)
    stale = []
    for game, blocks in GENERATORS.items():
        path = DOCS / f"{game}.md"
        old = path.read_text(encoding="utf-8")
        new = fill(old, blocks())
        if new != old:
            stale.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in stale:
        print(f"{'stale' if args.check else 'rewrote'}: {path.relative_to(ROOT)}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
