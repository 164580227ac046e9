#!/usr/bin/env python3
"""Checks every link of the built book (docs/book, made by `mdbook build docs`): each relative
href or src lands on a file of the book, and each #fragment on an element with that id there.
Links to other sites are not followed (CI has no internet). Exit 1 naming each broken link.
    scripts/check-book-links.py [docs/book]
"""
import html.parser
import os
import sys
import urllib.parse

book = sys.argv[1] if len(sys.argv) > 1 else "docs/book"


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key):
                self.links.append((key, a[key]))


pages = {}
for dirpath, _, files in os.walk(book):
    for f in files:
        if f.endswith(".html"):
            path = os.path.join(dirpath, f)
            p = Page()
            with open(path, encoding="utf-8") as fh:
                p.feed(fh.read())
            pages[os.path.normpath(path)] = p
if not pages:
    sys.exit(f"no HTML under {book}: build the book first (mdbook build docs)")

broken, checked = [], 0
for path, page in sorted(pages.items()):
    for key, link in page.links:
        u = urllib.parse.urlsplit(link)
        if u.scheme or link.startswith("//"):
            continue  # another site, mailto:, javascript:
        target = path if not u.path else os.path.normpath(
            os.path.join(os.path.dirname(path), urllib.parse.unquote(u.path)))
        checked += 1
        if not os.path.exists(target):
            broken.append(f"{path}: {key}={link}: no file {target}")
            continue
        if u.fragment and target in pages and u.fragment not in pages[target].ids:
            broken.append(f"{path}: {key}={link}: no #{u.fragment} in {target}")
for b in broken:
    print(b)
print(f"{len(pages)} pages, {checked} links checked, {len(broken)} broken")
sys.exit(1 if broken else 0)
