#!/usr/bin/env python3
"""Checks the book: every include resolves (its file exists, its anchor is in it), every relative
link of the READMEs (the repository's and the crates') names a file that exists and, for a `#`
fragment into Markdown, a heading there; and after `mdbook build` every internal link of the
HTML resolves (the page exists, and the fragment is an id on it). Exits non-zero with the list
of what does not.

    scripts/check_book.py book            # the sources' includes and the READMEs' links
    scripts/check_book.py book target/book  # and the built pages' links
"""

import html.parser
import pathlib
import re
import sys
import urllib.parse

INCLUDE = re.compile(r"\{\{#(?:include|rustdoc_include)\s+([^}\s]+)\s*\}\}")


def check_includes(book: pathlib.Path) -> list[str]:
    problems = []
    for md in sorted((book / "src").rglob("*.md")):
        for n, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
            for spec in INCLUDE.findall(line):
                path, _, anchor = spec.partition(":")
                target = (md.parent / path).resolve()
                where = f"{md.relative_to(book)}:{n}"
                if not target.is_file():
                    problems.append(f"{where}: include {path}: no such file")
                    continue
                if anchor and not re.fullmatch(r"[0-9:]*", anchor):
                    text = target.read_text(encoding="utf-8")
                    if f"ANCHOR: {anchor}" not in text or f"ANCHOR_END: {anchor}" not in text:
                        problems.append(f"{where}: include {path}: no anchor {anchor!r}")
    return problems


# The READMEs whose relative links are checked, from the repository's root (the book's parent).
READMES = ["README.md", "builder/README.md", "gpu/README.md", "examples/own-kernel/README.md"]
# An inline link or image, `[text](target "title")`, and a reference definition, `[x]: target`.
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def markdown_lines(text: str, blank_code: bool = True):
    """The lines of `text` outside fenced code blocks, with inline code spans blanked (or, with
    `blank_code` false, only their backticks dropped)."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield n, re.sub(r"`[^`]*`", "``", line) if blank_code else line.replace("`", "")


def heading_anchors(text: str) -> set[str]:
    """The fragments GitHub gives the headings of a Markdown file: the heading's text without
    its markup, lower-cased, punctuation dropped, spaces as hyphens; repeats numbered -1, -2…"""
    anchors, seen = set(), {}
    for _, line in markdown_lines(text, blank_code=False):
        m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def check_readmes(root: pathlib.Path) -> list[str]:
    problems = []
    for name in READMES:
        readme = root / name
        if not readme.is_file():
            continue
        for n, line in markdown_lines(readme.read_text(encoding="utf-8")):
            targets = INLINE_LINK.findall(line)
            m = REFERENCE.match(line)
            if m:
                targets.append(m.group(1))
            for link in targets:
                url = urllib.parse.urlparse(link)
                if url.scheme or link.startswith("//"):
                    continue
                where = f"{name}:{n}"
                path = urllib.parse.unquote(url.path)
                target = (readme.parent / path).resolve() if path else readme.resolve()
                if not target.exists():
                    problems.append(f"{where}: link {link}: no such file")
                    continue
                if url.fragment and target.suffix == ".md":
                    anchors = heading_anchors(target.read_text(encoding="utf-8"))
                    if urllib.parse.unquote(url.fragment) not in anchors:
                        problems.append(f"{where}: link {link}: no heading {url.fragment!r} there")
    return problems


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = set()
        self.links = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if "name" in a and tag == "a":
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if key in a and a[key] is not None:
                self.links.append(a[key])


def parse(path: pathlib.Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return p


def check_links(site: pathlib.Path) -> list[str]:
    problems = []
    pages = {}
    for page in sorted(site.rglob("*.html")):
        pages[page.resolve()] = parse(page)
    for page, parsed in pages.items():
        for link in parsed.links:
            url = urllib.parse.urlparse(link)
            if url.scheme or link.startswith("//") or link.startswith("mailto:"):
                continue
            path = urllib.parse.unquote(url.path)
            if not path:
                target = page
            elif path.startswith("/"):
                # Absolute: from the site's root (mdbook's 404 page links "/").
                target = (site / path.lstrip("/")).resolve()
            else:
                target = (page.parent / path).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(site.resolve())}"
            if not target.exists():
                problems.append(f"{where}: link {link}: no such file")
                continue
            if url.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if urllib.parse.unquote(url.fragment) not in ids:
                    problems.append(f"{where}: link {link}: no id {url.fragment!r} there")
    return problems


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    book = pathlib.Path(sys.argv[1])
    problems = check_includes(book) + check_readmes(book.resolve().parent)
    if len(sys.argv) == 3:
        site = pathlib.Path(sys.argv[2])
        if not (site / "index.html").is_file():
            problems.append(f"{site}: no index.html (was the book built?)")
        else:
            problems += check_links(site)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"book: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
