// The page's weight as web/build.mjs recorded it (web_assets.json): what a first visit loads stays
// within 40 KB gzip, and PDF.js (its module and worker) is loaded only when a PDF is opened.
// Usage: node page_weight_test.mjs WEB_ASSETS_JSON
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const budget = 40 * 1024;
const built = JSON.parse(readFileSync(process.argv[2], "utf8"));
const eager = Object.entries(built.assets).filter(([, a]) => !a.lazy);
console.log(`page: ${built.page.gzip_bytes} B gzip (budget ${budget}); loaded for PDFs: ${built.loaded_for_pdfs.gzip_bytes} B gzip`);
for (const [path, a] of Object.entries(built.assets)) console.log(`  ${path}: ${a.bytes} B, ${a.gzip_bytes} B gzip${a.lazy ? " (lazy)" : ""}`);
assert.equal(built.page.gzip_bytes, eager.reduce((sum, [, a]) => sum + a.gzip_bytes, 0));
assert.ok(built.page.gzip_bytes <= budget, `the page weighs ${built.page.gzip_bytes} B gzip, over ${budget}`);
assert.ok(built.assets["/assets/pdf.worker.min.mjs"]?.lazy, "PDF.js's worker is not a lazily loaded asset");
assert.ok(Object.entries(built.assets).some(([path, a]) => /^\/assets\/pdf_view-/.test(path) && a.lazy), "the PDF view is not a lazy chunk");
assert.ok(eager.every(([, a]) => a.bytes < 200_000), "a large module is part of the page");
