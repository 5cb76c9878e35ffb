#!/usr/bin/env python3
"""Texts for the tokenizer and encoder parity tests, the same on every run.

Real text comes from the Debian documentation that Debian packages install (debian-reference and
debian-faq, plain-text and HTML editions): sentences, table rows and cells, headings, listings, whole
paragraphs (some with their original line breaks) and passages long enough to be truncated at 256
tokens; each text once, in document order. Edge cases are generated:
accents in NFC and NFD, CJK, Hangul, emoji sequences, control and zero-width characters, Unicode
spaces, right-to-left text, case-mapping traps, very long words, empty and blank strings. The sweep
puts every code point of planes 0 and 1 (and samples of the others) between two letters, so a change
of Unicode data on either side shows up.

    corpus.py    prints how many texts of each kind there are
"""

import functools
import gzip
import html.parser
import pathlib
import re
import sys
import unicodedata

DOCUMENTS = [
    pathlib.Path("/usr/share/debian-reference/debian-reference.en.txt.gz"),
    pathlib.Path("/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz"),
]
# The HTML editions break the same text differently: table cells, headings, list items and
# preformatted listings come out as texts of their own.
HTML_PAGES = [
    *sorted(pathlib.Path("/usr/share/debian-reference").glob("*.en.html")),
    *sorted(pathlib.Path("/usr/share/doc/debian/FAQ").glob("*.en.html")),
]

# A sentence ends at . ! or ? followed by space and something that can start a sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_TABLE_RULE = re.compile(r"^\s*[+|][-=+|]*\s*$")


def _read(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read()


def _blocks(text):
    """Blank-line separated blocks, each a list of its lines."""
    block = []
    for line in text.splitlines():
        if line.strip():
            block.append(line)
        elif block:
            yield block
            block = []
    if block:
        yield block


def _is_table(block):
    return sum(1 for line in block if line.lstrip().startswith(("|", "+"))) * 2 >= len(block)


class _HtmlBlocks(html.parser.HTMLParser):
    """The text of each block element; <pre> keeps its line breaks."""

    _BLOCK = {
        "p",
        "li",
        "td",
        "th",
        "pre",
        "h1",
        "h2",
        "h3",
        "h4",
        "dt",
        "dd",
        "title",
        "div",
        "tr",
        "table",
        "ul",
        "ol",
        "br",
        "blockquote",
    }

    def __init__(self):
        super().__init__()
        self.blocks = []
        self._parts = []
        self._skip = 0
        self._pre = 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style")
        if tag in self._BLOCK:
            self._flush()
        self._pre += tag == "pre"

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style")
        if tag in self._BLOCK:
            self._flush()
        self._pre -= tag == "pre"

    def handle_data(self, data):
        if not self._skip:
            self._parts.append(data)

    def _flush(self):
        text = "".join(self._parts)
        self._parts = []
        text = text.strip("\n") if self._pre else re.sub(r"\s+", " ", text).strip()
        if text.strip():
            self.blocks.append((text, bool(self._pre)))

    def close(self):
        super().close()
        self._flush()


def _html_texts(path):
    parser = _HtmlBlocks()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    texts = []
    for text, pre in parser.blocks:
        if pre:
            texts.append(text)
            continue
        sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
        texts.extend(sentences)
        if len(sentences) > 1:
            texts.append(text)
    return texts


def _dedupe(texts):
    seen = set()
    out = []
    for t in texts:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


@functools.cache
def documentation_texts():
    """Real text, in document order, each text once (a tuple: the cache hands out the same one)."""
    texts = []
    long_passages = []
    for path in DOCUMENTS:
        paragraphs = []
        for block in _blocks(_read(path)):
            if _is_table(block):
                # Table rows as they stand: pipes, padding and all.
                texts.extend(line.strip() for line in block if not _TABLE_RULE.match(line))
                continue
            paragraph = " ".join(line.strip() for line in block)
            paragraphs.append(paragraph)
            sentences = [s.strip() for s in _SENTENCE_END.split(paragraph) if s.strip()]
            texts.extend(sentences)
            if len(sentences) > 1:
                texts.append(paragraph)
            if len(block) > 2 and len(paragraphs) % 5 == 0:
                texts.append("\n".join(block))  # original line breaks and indentation
        # Runs of paragraphs of about 2,500 characters: well past 256 tokens.
        run = []
        for paragraph in paragraphs:
            run.append(paragraph)
            if sum(len(p) for p in run) > 2500:
                long_passages.append(("\n\n" if len(long_passages) % 2 else " ").join(run))
                run = []
    for page in HTML_PAGES:
        texts.extend(_html_texts(page))
    return tuple(_dedupe(texts + long_passages))


def long_documentation_texts(count):
    """`count` passages from the documentation that exceed 256 tokens."""
    return [t for t in documentation_texts() if len(t) > 2500][:count]


def _nfd(s):
    return unicodedata.normalize("NFD", s)


def _nfc(s):
    return unicodedata.normalize("NFC", s)


def edge_cases():
    """Hand-picked Unicode and length traps."""
    accented = [
        "café",
        "naïve",
        "Crème brûlée",
        "Ångström",
        "Øresund",
        "Łódź",
        "São Paulo",
        "Dvořák",
        "Việt Nam",
        "façade",
        "Zürich",
        "résumé",
        "coöperate",
        "Ǆemal",
        "ǅ ǆ Ǆ",
        "ﬁnancial ﬂow",
        "Ich weiß nicht, STRASSE",
        "ẞ capital sharp s",
        "El Niño y la niña",
        "Mañana",
        "Ærøskøbing",
        "Hrvatski: čćđšž ČĆĐŠŽ",
        "Română: ăâîșț ĂÂÎȘȚ ş ţ",
        "Polski: ąęółśżźćń",
    ]
    cases = []
    for s in accented:
        cases += [s, _nfd(s), _nfc(s), s.upper(), s.lower()]
    cases += [
        "e\u0301",
        "e\u0301\u0301\u0301",
        "a\u0308\u0304",
        "\u0301 leading mark",
        "x\u0335\u0336\u0337 strike",
        "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e"
        "\u0320\u034dA\u0334\u0335\u031c\u0330\u0354L\u0348\u0328\u0354\u0318G\u0321\u0331\u0330\u0353O!",
        "\u1e9b\u0323",
        "\u212b angstrom sign",
        "\u2126 ohm sign",
        "\u0344 \u0340 \u0341 \u0343",
        "a\u1df6\u1df9b",
        "\U0001d15e\U0001d165\U0001d16d music",
        "Dives Akuru \U00011938 \U00011935\U00011930",
        "Hanunoo \u1734 pamudpod",
        "Ogham\u1680space",
        "\u166d \u111c9 \u2e43 \u061d old and new punctuation",
        # CJK, including extensions and compatibility ideographs
        "中文分词测试。",
        "我爱北京天安门！",
        "東京の天気は晴れです。",
        "日本語のテキストと English mixed",
        "カタカナ ひらがな 漢字",
        "ｶﾀｶﾅ ﾊﾝｶｸ",
        "\U00020000\U00020001\U0002a6d6 extension B",
        "\U0002a700 \U0002b740 \U0002b820 \U0002b81f \U0002ceaf \U0002ceb0 \U00030000 extension edges",
        "𠮷野家",
        "\uf900\uf901\ufa0e\ufad9 compatibility",
        "\u2f00\u2f01\u2fd5 radicals",
        "\u3400\u4dbf\u4dc0\u9fff\ua000",
        "\U0002f800\U0002fa1d supplement",
        "\u3007\u3006 ideographic zero",
        "中,文.中!文",
        # Hangul
        "한국어 텍스트",
        "안녕하세요, 세계!",
        "\u1100\u1161\u11a8 jamo",
        "\u3131\u314f halfwidth ﾡ",
        # Emoji: single, skin tones, ZWJ sequences, flags, keycaps, newer ones
        "😀😃😄",
        "👍🏽 thumbs",
        "👨‍👩‍👧‍👦 family",
        "🏳️‍🌈 flag",
        "🇯🇵🇫🇷 flags",
        "1️⃣ #️⃣ keycaps",
        "🧑🏿‍💻 coder",
        "❤️ vs ❤",
        "🫨 shaking face (Unicode 15)",
        "\U0001fae9\U0001fac6 (Unicode 16)",
        "\U0001f9d1\u200d\U0001f91d\u200d\U0001f9d1",
        "☕🙂",
        "emoji🙂inside🙂words",
        # Control characters
        "".join(chr(c) for c in range(0x20)) + "end",
        "a\x00b\x01c\x1fd",
        "tab\there",
        "new\nline",
        "carriage\rreturn",
        "crlf\r\nline",
        "vertical\x0btab",
        "form\x0cfeed",
        "delete\x7fchar",
        "next\x85line",
        "c1 \x80\x81\x9f controls",
        "\x00",
        "\x00\x00\x00",
        "\t\n\r",
        # Zero-width and format characters
        "zero\u200bwidth\u200bspace",
        "zw\u200cnj\u200dzwj",
        "word\u2060joiner",
        "\ufeffbom at start",
        "soft\u00adhyphen",
        "mongolian\u180evowel",
        "lrm\u200e rlm\u200f",
        "\u202eRLO override\u202c",
        "\u2066isolate\u2069",
        "invisible\u2062times\u2064plus",
        "\u0600\u0601 arabic number signs",
        "\U000e0001\U000e0041 tags \U000e007f",
        "variation\ufe0fselector\U000e0100",
        "\u0890\u0891\u08e2 new arabic format",
        "\U00013430\U00013438\U0001343f egyptian format",
        # Replacement and noncharacters, private use
        "bad\ufffdbyte",
        "\ufffd",
        "\ufffe\uffff noncharacters \ufdd0",
        "\ue000\uf8ff private use",
        "\U000f0000\U0010fffd supplementary private use",
        "\U0010ffff last",
        # Unicode spaces
        "no\u00a0break\u00a0space",
        "en\u2002em\u2003thin\u2009hair\u200a",
        "\u2000\u2001\u2004\u2005\u2006\u2007\u2008",
        "narrow\u202fnbsp",
        "math\u205fspace",
        "ideographic\u3000space",
        "line\u2028separator",
        "paragraph\u2029separator",
        "\u3000\u3000",
        "\u00a0",
        " ",
        "  ",
        "\t",
        "\n\n\n",
        " \t\n\r\u3000\u00a0 ",
        # Right to left
        "مرحبا بالعالم",
        "العربية: الكتاب مفيد.",
        "שלום עולם",
        "עברית עם ניקוד: שָׁלוֹם",
        "mixed עברית and English",
        "فارسی ۱۲۳ ١٢٣",
        "\u202bembedded rtl\u202c",
        # Case-mapping traps
        "İstanbul",
        "IĞDIR",
        "ıi İI",
        "DİYARBAKIR",
        "i̇",
        "ΟΔΟΣ",
        "Σίσυφος",
        "ὈΔΥΣΣΕΎΣ",
        "ΣΑΣ σας",
        "ǅungla",
        "ﬀ ﬃ ﬄ",
        "Å Å Å",
        "K k K",
        "ᲐᲑᲒ Georgian Mtavruli",
        "ꟊ ꟋꟌ ꟚꟜ \u1c89 new capitals",
        "\U00010d50\U00010d51 Garay",
        "𐐀𐐨 Deseret",
        "Ⰰⰰ Ⱟⱟ Glagolitic",
        # Full-width and other compatibility forms
        "ＡＢＣ１２３！？",
        "ｆｕｌｌｗｉｄｔｈ　ｓｐａｃｅ",
        "①②③ ⑴ ⒜",
        "Ⅻ ⅻ",
        "℃ ℉ ™ ℡",
        "½ ¾ ⅓",
        "x² y³ H₂O",
        "ℌ𝔢𝔩𝔩𝔬 𝐛𝐨𝐥𝐝 𝕕𝕠𝕦𝕓𝕝𝕖",
        # Very long words (100 characters is the WordPiece limit)
        "a" * 99,
        "a" * 100,
        "a" * 101,
        "b" * 500,
        "x" * 100 + " short",
        "é" * 100,
        "é" * 101,
        _nfd("é" * 100),
        _nfd("é" * 101),
        "a" * 99 + "\x00",
        "a" * 100 + "\u200b" + "a",
        "supercalifragilisticexpialidocious" * 4,
        "Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaft",
        "http://example.org/" + "very-long-path/" * 12 + "index.html",
        "9" * 150,
        "ab" * 60 + "!",
        "中" * 120,
        "😀" * 101,
        "İ" * 100,
        "İ" * 101,
        "ß" * 101,
        "ﬁ" * 101,
        "word " * 300,
        # Empty, blank, punctuation runs
        "",
        "!!!???...",
        "--==**",
        "«»„“”‘’‹›",
        "…",
        "—–-‐‒",
        "¿¡",
        "‽⁇⁈",
        '@#$%^&*()_+{}|:"<>?~`',
        "[]\\;',./",
        "。、！？「」『』【】",
        "((((nested))))",
        "a-b_c.d/e\\f",
        "'quoted' \"double\"",
        "[CLS-like] [not special]",
        "##prefix ##",
        "# ## ###",
        # Special tokens typed in the text are matched before normalisation, as Hugging Face does.
        "[CLS] hello [SEP] world",
        "a[MASK]b",
        "[UNK][PAD][SEP]",
        "[cls] lower case is not special",
        "[SEP",
        "[[CLS]]",
        "Café [MASK] 中文 [SEP]",
        "x [SEP]" * 40,
        # Mixed scripts
        "Kotae 答え means answer — ответ, απάντηση, 답, उत्तर, คำตอบ",
        "Русский текст с ЗАГЛАВНЫМИ буквами",
        "Ελληνικά με τόνους και διαλυτικά ϊΐ",
        "हिन्दी देवनागरी",
        "বাংলা লিপি",
        "தமிழ் எழுத்து",
        "ภาษาไทยไม่มีช่องว่าง",
        "ქართული",
        "Հայերեն",
        "አማርኛ",
        "ᏣᎳᎩ",
        "ᚠᚢᚦᚨᚱᚲ runes",
        "Ꙗ Old Cyrillic",
        "∑ x² ≤ ∞ ∀x∈ℝ",
        "→ ← ↔ ⇒",
        "$€£¥₹₩ prices",
        "3.14159 1,000,000 1e-10 0x1F",
        "user@example.com",
        "C++20 and C# and F#",
    ]
    return cases


# Planes 0 and 1 in full, the tags and variation selectors of plane 14, the CJK compatibility
# supplement; every 61st code point of planes 2 and 3 (CJK the BertNormalizer isolates) and the edges
# of the CJK blocks; every 4093rd code point elsewhere, and each plane's two noncharacters.
_SWEEP_FULL = [(0x0, 0x1FFFF), (0xE0000, 0xE01FF), (0x2F800, 0x2FA1F)]
_CJK_EDGES = [
    0x4E00,
    0x9FFF,
    0x3400,
    0x4DBF,
    0x20000,
    0x2A6DF,
    0x2A700,
    0x2B73F,
    0x2B740,
    0x2B81F,
    0x2B920,
    0x2CEAF,
    0xF900,
    0xFAFF,
    0x2F800,
    0x2FA1F,
    0x30000,
    0x3134A,
]
_WORDS_PER_TEXT = 64


def sweep_code_points():
    points = set()
    for first, last in _SWEEP_FULL:
        points.update(range(first, last + 1))
    points.update(range(0x20000, 0x40000, 61))
    points.update(range(0, 0x110000, 4093))
    for edge in _CJK_EDGES:
        points.update(range(edge - 2, edge + 3))
    for plane in range(17):
        points.update((plane << 16) | low for low in (0xFFFE, 0xFFFF))
    return sorted(p for p in points if not 0xD800 <= p <= 0xDFFF)


def sweep_texts():
    """Each code point c as the word "a{c}a" (punctuation splits it, a dropped mark joins it),
    64 words a text."""
    words = [f"a{chr(p)}a" for p in sweep_code_points()]
    return [" ".join(words[i : i + _WORDS_PER_TEXT]) for i in range(0, len(words), _WORDS_PER_TEXT)]


def main():
    docs = documentation_texts()
    print(f"documentation texts: {len(docs)} (longer than 2,500 chars: {sum(len(t) > 2500 for t in docs)})")
    print(f"edge cases: {len(edge_cases())}")
    print(f"sweep texts: {len(sweep_texts())} covering {len(sweep_code_points())} code points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
