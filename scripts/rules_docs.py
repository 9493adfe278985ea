#!/usr/bin/env python3
"""Rewrite the generated parts of the player rules (docs/rules/<game>.md) from the engine.

Every number a player needs sits between ``<!-- generated: NAME -->`` and ``<!-- /generated -->``
(:mod:`engine.rules_doc`); this script fills those parts from each game's ``rules_doc.blocks()``.
An MCP rule text (``gateway/agent_rules/<game>.md``) that carries a game's page after its own
preamble (from the page's title line on) gets the page again, its number markers left out.
``tests/engine/test_rules_docs.py`` fails while a file differs from what this would write.

    .venv/bin/python scripts/rules_docs.py            # rewrite the files that changed
    .venv/bin/python scripts/rules_docs.py --check    # exit 1 if a file would change
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.rules_doc import GENERATORS, fill  # noqa: E402

DOCS = ROOT / "docs" / "rules"
AGENT_RULES = ROOT / "gateway" / "agent_rules"
MARKER = re.compile(r"<!-- /?n(: [A-Za-z_]+)? -->")


def agent_copy(agent_text: str, page: str) -> str:
    """``agent_text`` with the page after its preamble (the page's title line on) replaced by ``page``,
    markers left out; unchanged when it does not carry the page."""
    title = page.splitlines()[0]
    at = agent_text.find("\n" + title + "\n")
    if at < 0:
        return agent_text
    return agent_text[:at + 1] + MARKER.sub("", page)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    args = ap.parse_args(argv)
    stale = []
    games = sorted(set(GENERATORS) | {p.stem for p in AGENT_RULES.glob("*.md") if (DOCS / p.name).is_file()})
    for game in games:
        path = DOCS / f"{game}.md"
        old = path.read_text(encoding="utf-8")
        new = fill(old, GENERATORS[game]()) if game in GENERATORS else old
        if new != old:
            stale.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
        agent = AGENT_RULES / f"{game}.md"
        if agent.is_file():
            old_agent = agent.read_text(encoding="utf-8")
            new_agent = agent_copy(old_agent, new)
            if new_agent != old_agent:
                stale.append(agent)
                if not args.check:
                    agent.write_text(new_agent, encoding="utf-8")
    for path in stale:
        print(f"{'stale' if args.check else 'rewrote'}: {path.relative_to(ROOT)}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
