#!/usr/bin/env python3
"""Tables with known cells for measuring how well Kotae finds tables in PDFs.

Writes OUT.html (table k on page k, each between two paragraphs of its own, in varied styles: ruled or not,
tight or loose padding, numbers right-aligned, 9 to 12 point type) for Chromium to print to PDF, and
OUT.json, the tables' cells as CSV would hold them (header first). Deterministic for a seed.

Usage: make_pdf_tables.py OUT [--tables N] [--seed S]
"""

import argparse
import html
import json
import random

WORDS = (
    "north south east west freight route depot harbour ferry truck cargo pallet crate invoice "
    "order customer supplier region budget forecast quarter staff shift permit customs"
).split()


def cell(rng, kind):
    if kind == "text":
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))).capitalize()
    if kind == "int":
        return str(rng.randint(0, 99999))
    if kind == "money":
        return f"{rng.uniform(0, 100000):,.2f}"
    if kind == "date":
        return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return f"{rng.choice('ABCDEFGH')}-{rng.randint(1, 999)}"  # a code


def table(rng):
    columns = rng.randint(2, 6)
    kinds = ["text"] + [rng.choice(["text", "int", "money", "date", "code"]) for _ in range(columns - 1)]
    header = [" ".join(rng.sample(WORDS, rng.randint(1, 2))).title() for _ in range(columns)]
    rows = [header]
    for _ in range(rng.randint(3, 20)):
        row = [cell(rng, k) for k in kinds]
        if rng.random() < 0.15:  # a hole, never in the first column
            row[rng.randint(1, columns - 1)] = ""
        rows.append(row)
    return rows, kinds


def html_of(k, rows, kinds, rng):
    ruled = rng.random() < 0.5
    padding = rng.choice([2, 4, 8])
    size = rng.choice([9, 10, 11, 12])
    style = f"font-size:{size}pt;border-collapse:collapse"
    cell_style = f"padding:{padding // 2}px {padding + 4}px" + (";border:1px solid #444" if ruled else "")
    intro = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize()
    out = [f'<div style="page-break-before:always"><p>{intro}.</p>']
    out.append(f'<table style="{style}">')
    for r, row in enumerate(rows):
        tag = "th" if r == 0 else "td"
        cells = []
        for value, kind in zip(row, kinds):
            align = "right" if kind in ("int", "money") and r > 0 else "left"
            cells.append(f'<{tag} style="{cell_style};text-align:{align}">{html.escape(value)}</{tag}>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    outro = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize()
    out.append(f"</table><p>{outro}.</p></div>")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--seed", type=int, default=20261207)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tables, parts = [], ["<html><head><title>Ledger</title></head><body style='font-family:serif'>"]
    for k in range(args.tables):
        rows, kinds = table(rng)
        tables.append(rows)
        parts.append(html_of(k, rows, kinds, rng))
    parts.append("</body></html>")
    with open(args.out + ".html", "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    with open(args.out + ".json", "w", encoding="utf-8") as f:
        json.dump(tables, f)


if __name__ == "__main__":
    main()
