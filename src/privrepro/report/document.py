"""A minimal document model written both as GitHub Markdown and as a self-contained HTML page.

The report is built once as a list of blocks (:class:`Heading`, :class:`Para`, :class:`Table`,
:class:`Image`, :class:`Bullets`, :class:`Callout`, :class:`Details`) and written by
:func:`to_markdown` (relative image links, renders on GitHub) and :func:`to_html` (images inlined
as base64 PNG, so the page stands alone). Inline text uses a small Markdown subset: ``code``,
**bold**, *italic* and [links](#anchor); :func:`inline_html` converts it.

A report of several :class:`Page` s links by anchor alone (``#pb-fig2``) wherever the anchor
lives; :func:`relink` points each such link at the page that holds the anchor.
"""

from __future__ import annotations

import base64
import html
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from privrepro.bounded_read import PLOT_BYTES, read_bytes

log = logging.getLogger("privrepro.report")

__all__ = [
    "Block",
    "Bullets",
    "Callout",
    "Details",
    "Heading",
    "Image",
    "Page",
    "Para",
    "Table",
    "anchors_of",
    "inline_html",
    "md_cell",
    "relink",
    "to_html",
    "to_markdown",
]


@dataclass
class Heading:
    """A section heading with an explicit anchor (``#anchor`` links to it in both outputs)."""

    level: int
    text: str
    anchor: str | None = None


@dataclass
class Para:
    """A paragraph of inline Markdown."""

    text: str


@dataclass
class Table:
    """A table of inline-Markdown cells; ``align`` per column: ``l``, ``r`` or ``c``."""

    header: list[str]
    rows: list[list[str]]
    align: list[str] | None = None


@dataclass
class Image:
    """A PNG shown with a caption; ``links`` are extra (label, path) links (e.g. the PDF)."""

    path: Path
    alt: str
    caption: str = ""
    links: list[tuple[str, Path]] = field(default_factory=list)


@dataclass
class Bullets:
    """A list; an item is inline text or (text, sub-items)."""

    items: list[str | tuple[str, list[str]]]


@dataclass
class Callout:
    """A marked box (an erratum): a title line and its blocks."""

    title: str
    blocks: list[Block]
    kind: str = "warning"


@dataclass
class Details:
    """A collapsed section (``<details>``): shown on click, on GitHub and in the HTML page."""

    summary: str
    blocks: list[Block]


Block = Heading | Para | Table | Image | Bullets | Callout | Details


@dataclass
class Page:
    """One file of a report: ``name`` is its stem (``""``: the front page), ``blocks`` its
    content."""

    name: str
    title: str
    blocks: list[Block]


def anchors_of(blocks: list[Block]) -> set[str]:
    """The anchors the headings of ``blocks`` define (inside callouts and details too)."""
    out: set[str] = set()
    for b in blocks:
        if isinstance(b, Heading) and b.anchor:
            out.add(b.anchor)
        elif isinstance(b, (Callout, Details)):
            out |= anchors_of(b.blocks)
    return out


_ANCHOR_LINK = re.compile(r"\]\(#([^)\s]+)\)")


def relink(blocks: list[Block], href: Callable[[str], str]) -> list[Block]:
    """``blocks`` with every inline link ``(#anchor)`` replaced by ``(href(anchor))``."""

    def text(t: str) -> str:
        return _ANCHOR_LINK.sub(lambda m: f"]({href(m.group(1))})", t)

    def item(i: str | tuple[str, list[str]]) -> str | tuple[str, list[str]]:
        return (text(i[0]), [text(x) for x in i[1]]) if isinstance(i, tuple) else text(i)

    out: list[Block] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(replace(b, text=text(b.text)))
        elif isinstance(b, Para):
            out.append(replace(b, text=text(b.text)))
        elif isinstance(b, Table):
            out.append(
                replace(
                    b,
                    header=[text(h) for h in b.header],
                    rows=[[text(c) for c in r] for r in b.rows],
                )
            )
        elif isinstance(b, Image):
            out.append(replace(b, caption=text(b.caption)))
        elif isinstance(b, Bullets):
            out.append(replace(b, items=[item(i) for i in b.items]))
        elif isinstance(b, Callout):
            out.append(replace(b, title=text(b.title), blocks=relink(b.blocks, href)))
        else:
            out.append(replace(b, blocks=relink(b.blocks, href)))
    return out


# --------------------------------------------------------------------------- Markdown


def md_cell(text: str) -> str:
    """A table cell: pipes escaped, line breaks as ``<br>``."""
    return text.replace("|", "\\|").replace("\n", "<br>")


def _rel(path: Path, base: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), base.resolve())).as_posix()


def _md_block(block: Block, base: Path) -> list[str]:
    if isinstance(block, Heading):
        anchor = f'<a id="{block.anchor}"></a>\n\n' if block.anchor else ""
        return [f"{anchor}{'#' * block.level} {block.text}"]
    if isinstance(block, Para):
        return [block.text]
    if isinstance(block, Table):
        align = block.align or ["l"] * len(block.header)
        rule = {"l": ":--", "r": "--:", "c": ":-:"}
        lines = [
            "| " + " | ".join(md_cell(h) for h in block.header) + " |",
            "|" + "|".join(rule[a] for a in align) + "|",
        ]
        lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in block.rows]
        return ["\n".join(lines)]
    if isinstance(block, Image):
        out = f"![{block.alt}]({_rel(block.path, base)})"
        extra = " · ".join(f"[{label}]({_rel(p, base)})" for label, p in block.links)
        caption = block.caption + (f" ({extra})" if extra else "")
        return [out, f"*{caption}*"] if caption else [out]
    if isinstance(block, Bullets):
        lines = []
        for item in block.items:
            if isinstance(item, tuple):
                lines.append(f"- {item[0]}")
                lines += [f"  - {sub}" for sub in item[1]]
            else:
                lines.append(f"- {item}")
        return ["\n".join(lines)]
    if isinstance(block, Callout):
        inner = [f"**{block.title}**"]
        for b in block.blocks:
            inner += _md_block(b, base)
        text = "\n\n".join(inner)
        return ["\n".join("> " + line if line else ">" for line in text.splitlines())]
    if isinstance(block, Details):
        inner = []
        for b in block.blocks:
            inner += _md_block(b, base)
        return [f"<details><summary>{html.escape(block.summary)}</summary>", *inner, "</details>"]
    raise TypeError(type(block))


def to_markdown(blocks: list[Block], base: Path) -> str:
    """GitHub Markdown; image and file links are relative to ``base`` (the report's folder)."""
    parts: list[str] = []
    for block in blocks:
        parts += _md_block(block, base)
    return "\n\n".join(parts).rstrip() + "\n"


# --------------------------------------------------------------------------- HTML

_CODE = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITAL = re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])")


def inline_html(text: str) -> str:
    """Inline Markdown (``code``, **bold**, *italic*, [text](href), ``<br>``) as escaped HTML."""
    codes: list[str] = []

    def keep(m: re.Match[str]) -> str:
        codes.append(m.group(1))
        return f"\x00{len(codes) - 1}\x00"

    text = _CODE.sub(keep, text)
    text = html.escape(text, quote=False).replace("&lt;br&gt;", "<br>")
    text = _LINK.sub(lambda m: f'<a href="{html.escape(m.group(2))}">{m.group(1)}</a>', text)
    text = _BOLD.sub(r"<strong>\1</strong>", text)
    text = _ITAL.sub(r"<em>\1</em>", text)
    return re.sub(
        "\x00(\\d+)\x00", lambda m: f"<code>{html.escape(codes[int(m.group(1))])}</code>", text
    )


def _html_block(block: Block, base: Path) -> str:
    if isinstance(block, Heading):
        anchor = f' id="{html.escape(block.anchor)}"' if block.anchor else ""
        return f"<h{block.level}{anchor}>{inline_html(block.text)}</h{block.level}>"
    if isinstance(block, Para):
        return f"<p>{inline_html(block.text)}</p>"
    if isinstance(block, Table):
        align = block.align or ["l"] * len(block.header)
        css = {"l": "left", "r": "right", "c": "center"}
        head = "".join(
            f'<th style="text-align:{css[a]}">{inline_html(h)}</th>'
            for h, a in zip(block.header, align, strict=True)
        )
        body = "".join(
            "<tr>"
            + "".join(
                f'<td style="text-align:{css[a]}">{inline_html(c)}</td>'
                for c, a in zip(row, align, strict=True)
            )
            + "</tr>"
            for row in block.rows
        )
        # wide tables (the per-paper counts) scroll inside the page instead of widening it
        return (
            f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>"
        )
    if isinstance(block, Image):
        links = " · ".join(
            f'<a href="{html.escape(_rel(p, base))}">{html.escape(label)}</a>'
            for label, p in block.links
        )
        caption = inline_html(block.caption) + (f" ({links})" if links else "")
        try:  # a regular file of bounded size: never a pipe waited on, a device or a huge file
            data = base64.b64encode(read_bytes(block.path, PLOT_BYTES)).decode("ascii")
        except OSError as exc:
            log.warning("plot not embedded: %s", exc)
            return (
                f"<figure><figcaption>{caption} — <em>plot not embedded: "
                f"{html.escape(str(exc))}</em></figcaption></figure>"
            )
        return (
            f'<figure><img alt="{html.escape(block.alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{caption}</figcaption></figure>"
        )
    if isinstance(block, Bullets):
        items = []
        for item in block.items:
            if isinstance(item, tuple):
                sub = "".join(f"<li>{inline_html(s)}</li>" for s in item[1])
                items.append(
                    f"<li>{inline_html(item[0])}" + (f"<ul>{sub}</ul>" if sub else "") + "</li>"
                )
            else:
                items.append(f"<li>{inline_html(item)}</li>")
        return "<ul>" + "".join(items) + "</ul>"
    if isinstance(block, Callout):
        inner = "".join(_html_block(b, base) for b in block.blocks)
        return (
            f'<div class="callout {html.escape(block.kind)}"><p class="callout-title">'
            f"{inline_html(block.title)}</p>{inner}</div>"
        )
    if isinstance(block, Details):
        inner = "".join(_html_block(b, base) for b in block.blocks)
        return f"<details><summary>{html.escape(block.summary)}</summary>{inner}</details>"
    raise TypeError(type(block))


_CSS = """
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;line-height:1.45;color:#1f2328}
.table-wrap{max-width:100%;overflow-x:auto;margin:0.8em 0}
table{border-collapse:collapse;font-size:0.9em}
th,td{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top}
th{background:#f6f8fa}
code{background:#f6f8fa;padding:0 3px;border-radius:3px;font-size:0.9em}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-style:italic;color:#57606a;font-size:0.9em}
.callout{border-left:4px solid #bf8700;background:#fff8c5;padding:0.4em 1em;margin:1em 0}
.callout-title{font-weight:bold}
details{margin:0.6em 0}summary{cursor:pointer;color:#0969da}
h2{border-bottom:1px solid #d0d7de;padding-bottom:0.2em;margin-top:2em}
"""


def to_html(blocks: list[Block], base: Path, title: str) -> str:
    """A self-contained HTML page (plots inlined as base64 PNG; other links relative to ``base``)."""
    body = "\n".join(_html_block(b, base) for b in blocks)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )
