"""The retrieval benchmark's texts, from documents in the working tree: passages of about 120 words
(paragraph-aligned, Markdown markup left in, as Kotae's chunks keep it) and one query per passage,
a 6-to-10-word span of it, so each query has a passage it came from. Deterministic.

Usage: retrieval_inputs.py PASSAGES_OUT QUERIES_OUT FILE...
"""

import re
import sys


def passages(paths, words_per_passage=120):
    out = []
    for path in paths:
        current = []
        for paragraph in re.split(r"\n\s*\n", open(path, encoding="utf-8").read()):
            words = paragraph.split()
            if not words:
                continue
            current.extend(words)
            if len(current) >= words_per_passage:
                out.append(" ".join(current[: 2 * words_per_passage]))
                current = []
        if len(current) >= 20:
            out.append(" ".join(current))
    return out


def main():
    passages_out, queries_out, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    found = passages(paths)
    if len(found) < 10:
        sys.exit(f"only {len(found)} passages in {paths}")
    queries = []
    for i, passage in enumerate(found):
        words = [w for w in passage.split() if re.search(r"[A-Za-z]", w)]
        length = 6 + i % 5
        start = (i * 7) % max(1, len(words) - length)
        queries.append(" ".join(words[start : start + length]))
    with open(passages_out, "w", encoding="utf-8") as out:
        out.write("\n".join(found) + "\n")
    with open(queries_out, "w", encoding="utf-8") as out:
        out.write("\n".join(queries) + "\n")
    print(f'{{"name": "retrieval_inputs", "passages": {len(found)}, "queries": {len(queries)}}}')


if __name__ == "__main__":
    main()
