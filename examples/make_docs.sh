#!/usr/bin/env bash
# How examples/docs/ was made (kept for the record; setup does not run it): four pages of SQLite's
# documentation, which its authors dedicated to the public domain, from Debian's sqlite3-doc
# 3.40.1, without the site's navigation, in four formats. Needs sqlite3-doc, pandoc and chromium.
set -euo pipefail
src=/usr/share/doc/sqlite3
out=$(cd "$(dirname "$0")" && pwd)/docs
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

# The page's article only: from its title on, without the table of contents.
article() {
  python3 - "$1" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
title = re.search(r"<title>(.*?)</title>", page, re.S).group(1).strip()
body = page[re.search(r'<div class="fancy_title">|<h1|<h2', page).start():]
body = re.sub(r'<div class="fancy_toc">.*?(?=<h1)', "", body, count=1, flags=re.S)
body = re.sub(r"<script.*?</script>", "", body, flags=re.S)
body = re.sub(r'<div class="fancy_title">\s*(.*?)\s*</div>', r"<h1>\1</h1>", body, count=1, flags=re.S)
body = re.sub(r"</?div[^>]*>", "", body)  # layout only
print(f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head><body>{body}</body></html>')
PY
}

article "$src/whentouse.html" >"$tmp/whentouse.html"
chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer \
  --print-to-pdf="$out/sqlite-when-to-use.pdf" "file://$tmp/whentouse.html" 2>/dev/null
article "$src/faq.html" >"$out/sqlite-faq.html"
article "$src/quirks.html" | pandoc -f html -t gfm-raw_html --wrap=none -o "$out/sqlite-quirks.md"
article "$src/howtocorrupt.html" | pandoc -f html -t docx -o "$out/sqlite-how-to-corrupt.docx"
ls -l "$out"
