"""Scanned copies of documents, as an office scanner makes them, for the OCR benchmarks.

Text is printed to PDF by Chromium, rasterised by poppler's pdftoppm at 300 dpi in gray, given a
small skew and mild noise (as bench/ingest_bench.cpp does: a 1-degree rotation, Gaussian noise of
sigma 12 grey levels), and written back as an image-only PDF: no text layer, so a reader has to OCR
every page. Python standard library, Chromium and poppler-utils only.
"""

import html
import math
import os
import random
import re
import statistics
import subprocess
import tempfile
import zlib

DPI = 300
SKEW_DEGREES = 1.0
NOISE_SIGMA = 12.0


def print_to_pdf(texts, pdf_path):
    """Texts (paragraphs split by blank lines, code keeping its lines) printed in one PDF by one
    Chromium (a start costs a second), each from a new Letter page. Returns each text's pages as
    (first, last): each starts with a marker in white 1-pixel type, which pdftotext finds in the
    text layer and a scan of the page cannot show."""
    body = "".join(
        '<div class="mark">KOTAEMARK%d</div><div class="text">%s</div>' % (i, html.escape(text))
        for i, text in enumerate(texts)
    )
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False) as page:
        page.write(
            '<!doctype html><meta charset="utf-8"><style>body{font:11pt serif}.text{white-space:pre-wrap}'
            ".mark{break-before:page;font-size:1px;line-height:1px;color:#fff}</style>" + body
        )
    try:
        subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
             "--print-to-pdf=" + pdf_path, "file://" + page.name],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800,
        )  # fmt: skip
    finally:
        os.unlink(page.name)
    layer = subprocess.run(["pdftotext", pdf_path, "-"], check=True, capture_output=True, text=True).stdout
    starts = {}
    for number, text in enumerate(layer.split("\f"), 1):
        for found in re.findall(r"KOTAEMARK(\d+)", text):
            starts[int(found)] = number
    assert sorted(starts) == list(range(len(texts))), "a marker is missing from the printed text"
    ends = [starts[i + 1] - 1 for i in range(len(texts) - 1)] + [layer.count("\f")]
    return [(starts[i], ends[i]) for i in range(len(texts))]


def rasterise(pdf_path, first=None, last=None):
    """The PDF's pages, one at a time, as (width, height, 8-bit gray pixels): pdftoppm's PGM files."""
    with tempfile.TemporaryDirectory() as folder:
        pages = ["-f", str(first), "-l", str(last)] if first else []
        subprocess.run(["pdftoppm", "-r", str(DPI), "-gray", *pages, pdf_path, folder + "/p"], check=True)
        for name in sorted(os.listdir(folder)):
            yield read_pgm(os.path.join(folder, name))
            os.unlink(os.path.join(folder, name))


def read_pgm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, at = [], 0
    while len(fields) < 4:  # P5, width, height, maximum value (no comments: pdftoppm writes none)
        end = at
        while data[end] not in b" \t\r\n":
            end += 1
        if end > at:
            fields.append(data[at:end])
        at = end + 1
    width, height = int(fields[1]), int(fields[2])
    return width, height, data[at : at + width * height]


def scanned(page, rng, noise=True):
    """The page as a scanner would give it back: skewed, then noisy (unless `noise` is false)."""
    width, height, pixels = page
    # A rotation by three shears (Paeth), each a shift of whole rows or column strips: slices, which
    # pure Python does at C speed, where a per-pixel rotation takes seconds a page.
    angle = math.radians(SKEW_DEGREES)
    pixels = shear_rows(pixels, width, height, -math.tan(angle / 2))
    pixels = shear_columns(pixels, width, height, math.sin(angle))
    pixels = shear_rows(pixels, width, height, -math.tan(angle / 2))
    return width, height, noisy(pixels, rng) if noise else pixels


def shear_rows(pixels, width, height, slope):
    out = bytearray(b"\xff" * (width * height))
    for y in range(height):
        shift, row = round(slope * (y - height / 2)), y * width
        if shift >= 0:
            out[row + shift : row + width] = pixels[row : row + width - shift]
        else:
            out[row : row + width + shift] = pixels[row - shift : row + width]
    return out


def shear_columns(pixels, width, height, slope):
    out = bytearray(b"\xff" * (width * height))
    x = 0
    while x < width:
        shift = round(slope * (x - width / 2))
        end = x + 1
        while end < width and round(slope * (end - width / 2)) == shift:
            end += 1
        for y in range(max(0, shift), min(height, height + shift)):
            source = (y - shift) * width
            out[y * width + x : y * width + end] = pixels[source + x : source + end]
        x = end
    return out


def noisy(pixels, rng):
    """Gaussian noise of sigma NOISE_SIGMA, clipped to 0..255. Per-pixel arithmetic in Python costs
    seconds a page, so each byte is made of the pixel's top 5 bits and 3 random bits (one big-integer
    OR, no carries between bytes), and one translate table adds the noise level those bits pick: the
    eight levels are the means of eight equally likely slices of the normal distribution."""
    normal = statistics.NormalDist()
    cuts = [-math.inf] + [normal.inv_cdf(i / 8) for i in range(1, 8)] + [math.inf]
    levels = [8 * (normal.pdf(a) - normal.pdf(b)) for a, b in zip(cuts, cuts[1:])]
    spread = math.sqrt(sum(v * v for v in levels) / 8)
    levels = [NOISE_SIGMA * v / spread for v in levels]
    table = bytes(min(255, max(0, round((c & 0xF8) + 4 + levels[c & 7]))) for c in range(256))
    top = bytes(pixels).translate(bytes(c & 0xF8 for c in range(256)))
    low = rng.randbytes(len(pixels)).translate(bytes(c & 7 for c in range(256)))
    both = int.from_bytes(top, "big") | int.from_bytes(low, "big")
    return both.to_bytes(len(pixels), "big").translate(table)


def write_image_pdf(pages, pdf_path, level=1):
    """An image-only PDF: each page one 8-bit gray image (Flate) filling a page of its size at DPI.
    Pages are written as they come (a noisy page compresses to megabytes); `level` is zlib's.
    Returns the page count."""
    offsets = {}  # object number -> its byte offset; 1 is the catalog, 2 the page tree, both written last
    with open(pdf_path, "wb") as f:

        def put(number, body):
            offsets[number] = f.tell()
            f.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))

        f.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        kids = []
        for width, height, pixels in pages:
            image, page = zlib.compress(pixels, level), len(offsets) + 3
            w, h = width * 72 / DPI, height * 72 / DPI
            draw = b"q %.2f 0 0 %.2f 0 0 cm /Im0 Do Q" % (w, h)
            put(
                page,
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /Im0 %d 0 R >> >> "
                b"/Contents %d 0 R >>" % (w, h, page + 1, page + 2),
            )
            put(
                page + 1,
                b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream"
                % (width, height, len(image), image),
            )
            put(page + 2, b"<< /Length %d >>\nstream\n%s\nendstream" % (len(draw), draw))
            kids.append(page)
        put(2, b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids)))
        put(1, b"<< /Type /Catalog /Pages 2 0 R >>")
        xref = f.tell()
        f.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1))
        f.writelines(b"%010d 00000 n \n" % offsets[n] for n in range(1, len(offsets) + 1))
        f.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(offsets) + 1, xref))
    return len(kids)


def scan_pdf(source_pdf, out_pdf, seed, first=None, last=None, noise=True, level=1):
    """A scanned copy of a born-digital PDF (or of its pages first..last). Returns its page count."""
    rng = random.Random(seed)
    pages = (scanned(page, rng, noise) for page in rasterise(source_pdf, first, last))
    return write_image_pdf(pages, out_pdf, level)
