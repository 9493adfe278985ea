"""``GET /rules/{game}``: a game's player rules (``docs/rules/<game>.md``) as one plain HTML page.

A client links a refused order's rule id to ``/rules/<game>#<id>`` (``/rules/archipelago#A24``): the
page gives every rule id of its game an anchor (``id="A24"``) on the first passage that names it
outside the page's introduction — a list item, a paragraph, a table row, else the heading whose range
("A13–A15") holds it. Headings get GitHub's anchors too, so the Markdown's own contents links work.

The Markdown is the small subset the rules are written in (headings, paragraphs, ordered and
unordered lists, nested ones by indentation, pipe tables, fenced code, `code`, **bold**, *italics*,
[links](…)); everything is HTML-escaped first, so no text of the file can become markup. The page is
English (``lang="en" dir="ltr"``), phone-first (a viewport, tables that scroll sideways), with one
stylesheet of the gateway's own (the door's Content-Security-Policy allows no inline style).
Rendered once per game at start-up; an unknown game is the not-found page.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"

#: game -> (the letter of its rule ids, the page's title for the home link)
GAMES: dict[str, str] = {"salvo": "S", "archipelago": "A", "arcmage": "M"}

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_ITEM = re.compile(r"^( *)([-*]|\d+\.) +(.*)$")
_FENCE = re.compile(r"^```")
_HEADING = re.compile(r"^(#{1,6}) +(.*?) *#*$")


@dataclass
class _Block:
    """A passage of the page: its HTML tag, its raw (Markdown) text and the rule ids it anchors."""

    tag: str
    text: str
    anchors: list[str] = field(default_factory=list)
    heading: bool = False


def slug(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    plain = re.sub(r"[^\w\- ]", "", _inline_text(text).lower())
    return plain.replace(" ", "-")


def _inline_text(md: str) -> str:
    """The text of inline Markdown without its marks (for slugs)."""
    md = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", md)
    return md.replace("`", "").replace("**", "").replace("*", "")


def _href(url: str) -> str:
    """A link of the rules: another game's page (``salvo.md``) becomes its ``/rules/`` page."""
    m = re.fullmatch(r"(?:\./)?([a-z]+)\.md(#.*)?", url)
    if m and m.group(1) in GAMES:
        return f"/rules/{m.group(1)}{m.group(2) or ''}"
    if m and m.group(1) == "README":
        return "/"
    return url


def inline(md: str) -> str:
    """Inline Markdown to HTML; the text is escaped first, so only the marks below make markup."""
    codes: list[str] = []

    def keep_code(m: re.Match[str]) -> str:
        codes.append(f"<code>{html.escape(m.group(1), quote=False)}</code>")
        return f"\x00{len(codes) - 1}\x00"

    text = re.sub(r"`([^`]+)`", keep_code, md)
    links: list[str] = []

    def keep_link(m: re.Match[str]) -> str:
        url = _href(m.group(2).strip())
        if not re.match(r"(https?:|/|#)", url):  # no javascript: or other schemes
            url = "#"
        links.append(f'<a href="{html.escape(url)}">{_marks(html.escape(m.group(1), quote=False))}</a>')
        return f"\x01{len(links) - 1}\x01"

    text = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", keep_link, text)
    text = _marks(html.escape(text, quote=False))
    text = re.sub("\x01(\\d+)\x01", lambda m: links[int(m.group(1))], text)
    return re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], text)


def _marks(text: str) -> str:
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", text)


def _table(rows: list[str]) -> str:
    def cells(row: str) -> list[str]:
        return [c.strip() for c in row.strip().strip("|").split("|")]
    head, body = cells(rows[0]), [cells(r) for r in rows[2:]] if len(rows) > 1 else []
    out = ["<div class=\"table-wrap\"><table><thead><tr>"]
    out += [f"<th scope=\"col\">{inline(c)}</th>" for c in head]
    out.append("</tr></thead><tbody>")
    for r in body:
        out.append("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


class _Page:
    """The page's HTML, built block by block; rule anchors are placed once every block is known."""

    def __init__(self, letter: str) -> None:
        self.ids = re.compile(rf"\b{letter}(\d+)(?:\s*[–-]\s*{letter}(\d+))?\b")
        self.parts: list[str | _Block] = []
        self.seen_heading = False

    def block(self, tag: str, text: str, heading: bool = False) -> _Block:
        b = _Block(tag, text, heading=heading)
        self.parts.append(b)
        return b

    def mentions(self, text: str, ranges: bool) -> list[int]:
        out: list[int] = []
        for m in self.ids.finditer(text):
            lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
            out += list(range(lo, hi + 1)) if ranges and hi - lo < 40 else [lo, hi]
        return out

    def place_anchors(self, letter: str) -> None:
        """Each rule id anchors, in this order of preference: the first passage naming it in the section
        whose heading's range holds it (A52 in "Economy (A41–A53)"), else the first passage naming it
        anywhere after the introduction, else that heading itself."""
        blocks = [p for p in self.parts if isinstance(p, _Block)]
        first_h2 = next((i for i, b in enumerate(blocks) if b.tag == "h2"), 0)
        section: set[int] = set()
        own: list[tuple[_Block, list[int], set[int]]] = []
        for b in blocks[first_h2:]:
            if b.tag == "h2":
                section = set(self.mentions(b.text, ranges=True))
            if not b.heading:
                own.append((b, self.mentions(b.text, ranges=True), section))
        placed: set[int] = set()

        def put(b: _Block, n: int) -> None:
            placed.add(n)
            b.anchors.append(f"{letter}{n}")

        for b, ns, home in own:
            for n in ns:
                if n in home and n not in placed:
                    put(b, n)
        for b, ns, _ in own:
            for n in ns:
                if n not in placed:
                    put(b, n)
        for b in blocks[first_h2:]:
            if b.heading:
                for n in self.mentions(b.text, ranges=True):
                    if n not in placed:
                        put(b, n)

    def html(self) -> str:
        out: list[str] = []
        for p in self.parts:
            if isinstance(p, str):
                out.append(p)
                continue
            spans = "".join(f'<span class="rule-anchor" id="{a}"></span>' for a in p.anchors)
            if p.heading:
                out.append(f'<{p.tag} id="{slug(p.text)}">{spans}{inline(p.text)}</{p.tag}>')
            elif p.tag == "table":
                out.append(spans + _table(p.text.split("\n")))
            else:
                out.append(f"<{p.tag}>{spans}{inline(p.text)}" + ("" if p.tag == "li" else f"</{p.tag}>"))
        return "\n".join(out)


def _close_lists(page: _Page, lists: list[tuple[int, str]], indent: int = -1) -> None:
    """Close the open lists (``lists``: (indent, "ul"/"ol")) deeper than ``indent``."""
    while lists and lists[-1][0] > indent:
        page.parts.append(f"</li></{lists.pop()[1]}>")


def _open_item(page: _Page, lists: list[tuple[int, str]], indent: int, kind: str) -> None:
    """Before a list item at ``indent`` of ``kind`` ("ul"/"ol"): a nested list opened, the item before it
    ended, or the list of another kind at that indent closed and a new one opened."""
    if lists and indent > lists[-1][0]:
        page.parts.append(f"<{kind}>")
        lists.append((indent, kind))
        return
    _close_lists(page, lists, indent)
    if lists and lists[-1][0] == indent and lists[-1][1] == kind:
        page.parts.append("</li>")
        return
    if lists and lists[-1][0] == indent:
        page.parts.append(f"</li></{lists.pop()[1]}>")
    page.parts.append(f"<{kind}>")
    lists.append((indent, kind))


def render(markdown: str, letter: str) -> str:
    """The body HTML of a rules page (module docstring: the subset read and the anchors placed)."""
    page = _Page(letter)
    lines = _COMMENT.sub("", markdown).split("\n")
    para: list[str] = []
    lists: list[tuple[int, str]] = []  # open lists: (indent, "ul"/"ol")
    item: _Block | None = None

    def end_para() -> None:
        if para:
            page.block("p", " ".join(s.strip() for s in para))
            para.clear()

    def end_lists(indent: int = -1) -> None:
        nonlocal item
        _close_lists(page, lists, indent)
        item = None if not lists else item

    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            end_para()
            end_lists()
            j = i + 1
            while j < len(lines) and not _FENCE.match(lines[j]):
                j += 1
            page.parts.append("<pre><code>" + html.escape("\n".join(lines[i + 1:j]), quote=False) + "</code></pre>")
            i = j + 1
            continue
        if not line.strip():
            end_para()
            end_lists()
            i += 1
            continue
        h = _HEADING.match(line)
        if h:
            end_para()
            end_lists()
            page.block(f"h{len(h.group(1))}", h.group(2), heading=True)
            i += 1
            continue
        if line.lstrip().startswith("|"):
            end_para()
            end_lists()
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(lines[i])
                i += 1
            page.block("table", "\n".join(rows))
            continue
        m = _ITEM.match(line)
        if m and (not para or lists):
            end_para()
            _open_item(page, lists, len(m.group(1)), "ol" if m.group(2)[0].isdigit() else "ul")
            item = page.block("li", m.group(3))
            i += 1
            continue
        if item is not None and lists and line.startswith(" "):
            item.text += " " + line.strip()  # a list item's continuation line
            i += 1
            continue
        para.append(line)
        i += 1
    end_para()
    end_lists()
    page.place_anchors(letter)
    return page.html()


def page(game: str) -> str:
    """The whole HTML page of ``game``'s rules."""
    md = (DOCS / f"{game}.md").read_text(encoding="utf-8")
    title = next((ln[2:].strip() for ln in md.splitlines() if ln.startswith("# ")), f"{game} — the rules")
    others = " · ".join(f'<a href="/rules/{g}">{g.capitalize()}</a>' for g in GAMES if g != game)
    return ("<!doctype html>\n<html lang=\"en\" dir=\"ltr\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<meta name=\"referrer\" content=\"no-referrer\">\n"
            f"<title>{html.escape(_inline_text(title))}</title>\n"
            "<link rel=\"icon\" href=\"/static/img/icon.svg\" type=\"image/svg+xml\">\n"
            "<link rel=\"stylesheet\" href=\"/static/css/rules.css\">\n</head>\n<body>\n"
            f"<nav class=\"rules-nav\" aria-label=\"site\"><a href=\"/\">⚓ Home</a> · rules of {others}</nav>\n"
            f"<main class=\"rules\" data-game=\"{game}\">\n{render(md, GAMES[game])}\n</main>\n</body>\n</html>\n")


def routes() -> list[object]:
    """``/rules/{game}`` for the games of :data:`GAMES` (pages rendered once, here); another name
    raises the router's 404 (the not-found page)."""
    from starlette.exceptions import HTTPException
    from starlette.routing import Route

    pages = {g: page(g) for g in GAMES}

    async def rules(request: Request) -> Response:
        body = pages.get(request.path_params["game"])
        if body is None:
            raise HTTPException(404)
        return HTMLResponse(body, headers={"cache-control": "no-cache"})

    return [Route("/rules/{game}", rules)]


__all__ = ["DOCS", "GAMES", "inline", "page", "render", "routes", "slug"]
