"""Open the report's pages in a real headless Chromium and check what a reader would meet.

    python tests/report/page_check.py REPORT.html REPORT/*.html --screenshot results/REPORT.summary.png

(``make report-check``.) A tool of the test suite, not of the library: it needs the ``test``
dependency group. Checks, on each page as the browser rendered it: every image loaded (decoded,
non-zero size), every internal link resolves (``#anchor`` to an element with that id on its page,
a relative link to an existing file), the page raised no console error, uncaught exception or
failed request, and no element makes the page wider than the window (1280 px by default: a reader
never scrolls sideways to read the page; a wide table scrolls inside it). On the first page (the
front page) every table must also fit the window whole, without scrolling inside itself.
Keeps a screenshot of the first page's top (the summary) for a person to look at. Exit status 1
when a check fails, 2 when no browser can be started.

The browser is the system's Chromium (``/usr/bin/chromium`` on Debian; ``PRIVREPRO_CHROMIUM``
or ``--chromium`` to choose another), driven by Playwright for Python; Playwright's own browser
download is never used. Needs the ``test`` dependency group (``make env`` installs it).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from privrepro.commands import command_parser

__all__ = ["CHROMIUM_ARGS", "PageCheck", "check_page", "find_chromium", "main"]

#: headless flags for a machine with no display and no network (and, in CI, as root)
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

_INSPECT = """() => ({
  images: Array.from(document.images).map(i => ({
    src: i.currentSrc.slice(0, 80), alt: i.alt, complete: i.complete,
    width: i.naturalWidth, height: i.naturalHeight})),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => ({
    href: a.getAttribute('href'), url: a.href})),
  ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
  title: document.title,
  pageWidth: document.documentElement.scrollWidth,
  viewWidth: document.documentElement.clientWidth,
  wide: Array.from(document.querySelectorAll('body > *'))
    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
    .map(e => e.tagName.toLowerCase() + ' ' + (e.textContent || '').trim().slice(0, 60)),
  scrolling: Array.from(document.querySelectorAll('table'))
    .filter(t => t.parentElement && t.parentElement.scrollWidth > t.parentElement.clientWidth + 1)
    .map(t => ({width: t.parentElement.scrollWidth, shown: t.parentElement.clientWidth,
                text: (t.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 60)})),
})"""


@dataclass
class PageCheck:
    """What the browser found on one page."""

    page: Path
    title: str = ""
    images: int = 0
    internal_links: int = 0
    external_links: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    screenshot: Path | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        verdict = "ok" if self.ok else f"{len(self.problems)} problems"
        shot = f"; screenshot {self.screenshot}" if self.screenshot else ""
        return (
            f"{self.page}: {verdict} ({self.images} images loaded, {self.internal_links} internal "
            f"links resolved, {len(self.external_links)} external links not followed){shot}"
        )


def find_chromium(explicit: str | None = None) -> str | None:
    """The Chromium to drive: ``explicit``, ``PRIVREPRO_CHROMIUM``, or chromium on PATH."""
    for cand in (explicit, os.environ.get("PRIVREPRO_CHROMIUM")):
        if cand:
            return shutil.which(cand) or (cand if Path(cand).is_file() else None)
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _link_problem(href: str, url: str, page: Path, ids: set[str]) -> str | None:
    """Why an internal link does not resolve, or None."""
    parts = urlsplit(url)
    if parts.scheme != "file":
        return None
    target = Path(unquote(parts.path))
    if target != page.resolve() and not target.exists():
        return f"link {href!r}: no file {target}"
    fragment = unquote(parts.fragment)
    if fragment and target == page.resolve() and fragment not in ids:
        return f"link {href!r}: no element with id {fragment!r}"
    if fragment and target != page.resolve() and target.suffix == ".html":
        if f'id="{fragment}"' not in target.read_text(encoding="utf-8", errors="replace"):
            return f"link {href!r}: no element with id {fragment!r} in {target.name}"
    return None


def check_page(
    page: str | Path,
    screenshot: str | Path | None = None,
    chromium: str | None = None,
    width: int = 1280,
    height: int = 1000,
    timeout_s: float = 60.0,
    tables_fit: bool = False,
) -> PageCheck:
    """Load ``page`` (a local HTML file) in headless Chromium and check it (module docstring);
    with ``tables_fit``, a table that scrolls inside its box (wider than the window) is a
    problem too.

    Raises:
        FileNotFoundError: the page, or a Chromium to drive, is missing.
    """
    from playwright.sync_api import sync_playwright

    path = Path(page).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no page at {path}")
    exe = find_chromium(chromium)
    if exe is None:
        raise FileNotFoundError(
            "no Chromium found (Debian: `apt-get install chromium`; or set PRIVREPRO_CHROMIUM)"
        )
    result = PageCheck(page=path)
    with tempfile.TemporaryDirectory(prefix="privrepro-chromium-") as profile:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile,
                executable_path=exe,
                headless=True,
                args=list(CHROMIUM_ARGS),
                viewport={"width": width, "height": height},
            )
            try:
                tab = context.new_page()
                tab.on(
                    "console",
                    lambda m: (
                        result.problems.append(f"console {m.type}: {m.text}")
                        if m.type == "error"
                        else None
                    ),
                )
                tab.on("pageerror", lambda e: result.problems.append(f"page error: {e}"))
                tab.on(
                    "requestfailed",
                    lambda r: result.problems.append(
                        f"request failed: {r.url[:120]} ({r.failure})"
                    ),
                )
                tab.goto(path.as_uri(), wait_until="load", timeout=timeout_s * 1000)
                found = tab.evaluate(_INSPECT)
                result.title = str(found["title"])
                ids = set(found["ids"])
                for img in found["images"]:
                    if not img["complete"] or img["width"] == 0 or img["height"] == 0:
                        result.problems.append(f"image not loaded: {img['alt']!r} {img['src']}")
                    else:
                        result.images += 1
                if found["pageWidth"] > found["viewWidth"] + 1:
                    what = "; ".join(found["wide"][:3]) or "an element"
                    result.problems.append(
                        f"the page is wider than the window ({found['pageWidth']} px > "
                        f"{found['viewWidth']} px): {what}"
                    )
                if tables_fit:
                    for t in found["scrolling"]:
                        result.problems.append(
                            f"a table wider than the window ({t['width']} px in {t['shown']} "
                            f"px) scrolls sideways: {t['text']}"
                        )
                for link in found["links"]:
                    scheme = urlsplit(link["url"]).scheme
                    if scheme in ("http", "https", "mailto"):
                        result.external_links.append(link["url"])
                        continue
                    problem = _link_problem(link["href"], link["url"], path, ids)
                    if problem:
                        result.problems.append(problem)
                    else:
                        result.internal_links += 1
                if screenshot is not None:
                    shot = Path(screenshot)
                    shot.parent.mkdir(parents=True, exist_ok=True)
                    tab.screenshot(path=str(shot), full_page=False)
                    result.screenshot = shot
            finally:
                context.close()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = command_parser("python tests/report/page_check.py", __doc__)
    ap.add_argument("pages", nargs="*", default=["REPORT.html"], help="HTML files to check")
    ap.add_argument("--screenshot", default=None, help="PNG of the first page's top")
    ap.add_argument("--chromium", default=None, help="the Chromium executable")
    args = ap.parse_args(argv)
    status = 0
    for i, page in enumerate(args.pages):
        try:
            res = check_page(
                page, args.screenshot if i == 0 else None, args.chromium, tables_fit=i == 0
            )
        except FileNotFoundError as exc:
            print(f"page_check: {exc}", file=sys.stderr)
            return 2
        print(res.summary())
        for p in res.problems:
            print(f"  {p}")
        status = status or (0 if res.ok else 1)
    return status


if __name__ == "__main__":
    sys.exit(main())
