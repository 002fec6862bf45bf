#!/usr/bin/env python3
"""Checks the book: every include resolves (its file exists, its anchor is in it), and after
`mdbook build` every internal link of the HTML resolves (the page exists, and the fragment is an
id on it). Exits non-zero with the list of what does not.

    scripts/check_book.py book            # the sources' includes
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
    problems = check_includes(book)
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
