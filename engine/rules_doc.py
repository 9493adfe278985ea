"""Generated parts of the player rules (``docs/rules/*.md``): markers, filling, tables.

A rules document keeps every number a player needs between markers, so that it is written from the
engine's own constants and cannot drift from them::

    <!-- generated: units -->
    | unit | id | … |
    <!-- /generated -->

    The bank gives 1 for <!-- generated: bank_rate -->4<!-- /generated --> of one resource.

A block spans lines (its content starts and ends with a newline); an inline one stays on its line.
:func:`fill` rewrites every marked part from a ``{name: content}`` mapping (each game's
``rules_doc.blocks()``, listed in :data:`GENERATORS`) and :func:`names` lists the names a text
uses.  Pure: strings in, strings out (``scripts/rules_docs.py`` reads and writes the files;
``tests/engine/test_rules_docs.py`` compares them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = ["GENERATORS", "MARKER", "counted", "fill", "names", "table"]

#: one generated part: its name, then its content up to the closing marker
MARKER = re.compile(r"<!-- generated: ([a-z0-9_]+) -->(.*?)<!-- /generated -->", re.DOTALL)


def names(text: str) -> list[str]:
    """The names of the generated parts of ``text``, in order of appearance."""
    return [m.group(1) for m in MARKER.finditer(text)]


def fill(text: str, blocks: Mapping[str, str]) -> str:
    """``text`` with the content of every generated part replaced by ``blocks[name]``.

    A part spanning lines gets ``"\\n" + content + "\\n"``; an inline part the bare content.
    Raises ``KeyError`` naming a part ``blocks`` does not know."""
    def one(m: re.Match[str]) -> str:
        name, old = m.group(1), m.group(2)
        if name not in blocks:
            raise KeyError(f"unknown generated part {name!r} (known: {', '.join(sorted(blocks))})")
        new = blocks[name].strip("\n")
        if "\n" in old or "\n" in new:
            new = f"\n{new}\n"
        return f"<!-- generated: {name} -->{new}<!-- /generated -->"

    return MARKER.sub(one, text)


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table (no trailing newline)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def counted(goods: Mapping[str, int], order: Sequence[str]) -> str:
    """``{"food": 1, "iron": 2}`` as ``"1 food, 2 iron"`` in ``order`` (``"–"`` when empty)."""
    parts = [f"{goods[r]} {r}" for r in order if goods.get(r)]
    return ", ".join(parts) if parts else "–"


def _archipelago() -> dict[str, str]:
    from engine.archipelago import rules_doc

    return rules_doc.blocks()


def _salvo() -> dict[str, str]:
    from engine.salvo import rules_doc

    return rules_doc.blocks()


#: game kind -> the generated parts of its rules document (``docs/rules/<kind>.md``)
GENERATORS: Mapping[str, Callable[[], dict[str, str]]] = {"archipelago": _archipelago, "salvo": _salvo}
