// The web page end to end: Debian's Chromium, driven by playwright-core, against the real
// `kotae serve` on a loopback port. A user creates a collection, drops a PDF and an HTML file, waits
// for the job, asks a question answered by the PDF, watches the answer stream in with citations,
// clicks one and sees the PDF itself (PDF.js, loaded only then) at the page that holds the cited span,
// the span highlighted on the rendered page. Also: a 20-page PDF opened at its cited page (the time
// from click to highlighted page is measured and written to artifacts/pdf_open.json), answers as
// Markdown, hostile Markdown and HTML in an answer and a document that never run, search mode,
// conversations kept by the server across a restart and resumed, renamed and deleted, settings from
// what the server reports, per-file upload errors, API errors and an unreachable server shown plainly,
// settings kept per browser, keyboard only, a narrow screen, labels and contrast, no console errors.
//
// Usage: node browser_test.mjs KOTAE_BINARY WEB_DIR EXAMPLES_DIR WORK_DIR
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

const [kotae, webDir, examples, work] = process.argv.slice(2);
const { chromium } = createRequire(join(webDir, "package.json"))("playwright-core");
const pdf = join(examples, "sqlite-when-to-use.pdf"), html = join(examples, "sqlite-faq.html");
const artifacts = join(work, "artifacts");

let server, base, browser, data;
const consoleErrors = [];
const timings = {};

const serverNoise = [];

function startServer(data) {
  return new Promise((resolve, reject) => {
    const child = spawn(kotae, ["serve", "--data", data, "--port", "0"], { stdio: ["ignore", "ignore", "pipe"] });
    let port = 0, buffer = "";
    const timer = setTimeout(() => reject(new Error("kotae serve was not ready in 120 s")), 120_000);
    child.on("exit", code => reject(new Error(`kotae serve exited with ${code}`)));
    child.stderr.on("data", chunk => {
      buffer += chunk;
      for (let nl; (nl = buffer.indexOf("\n")) >= 0; buffer = buffer.slice(nl + 1)) {
        const line = buffer.slice(0, nl);
        // The server logs JSON lines; anything else (a library's own warning) is kept for the report.
        if (!line.startsWith("{")) { serverNoise.push(line); continue; }
        const event = JSON.parse(line);
        if (event.event === "listening") port = event.port;
        if (event.event === "ready") { clearTimeout(timer); resolve({ child, url: `http://127.0.0.1:${port}` }); }
      }
    });
  });
}

function watch(page, label) {
  page.on("console", m => { if (m.type() === "error") consoleErrors.push(`${label}: ${m.text()}`); });
  page.on("pageerror", e => consoleErrors.push(`${label}: ${e.message}`));
}

// Files dropped on the drop zone as a user's drag and drop would deliver them.
async function dropFiles(page, paths) {
  const files = paths.map(p => ({ name: p.split("/").pop(), data: readFileSync(p).toString("base64") }));
  const transfer = await page.evaluateHandle(files => {
    const dt = new DataTransfer();
    for (const f of files) {
      const bytes = Uint8Array.from(atob(f.data), c => c.charCodeAt(0));
      dt.items.add(new File([bytes], f.name));
    }
    return dt;
  }, files);
  await page.dispatchEvent("#drop-zone", "drop", { dataTransfer: transfer });
}

const squash = s => s.replace(/\s+/g, " ").trim();
// As the page folds text to match PDF.js's to the server's: no whitespace, NFKC, one dash, one quote.
const fold = s => s.normalize("NFKC").replace(/[\s\u00ad]/g, "").replace(/[\u2010-\u2015\u2212]/g, "-")
  .replace(/[\u2018\u2019]/g, "'").replace(/[\u201c\u201d]/g, '"').toLowerCase();

// The panel shows the PDF's page rendered, with a visible highlight over it whose text is `cited`.
async function checkPdfHighlight(page, cited) {
  const view = page.locator("#source-panel .pdf-view");
  await view.locator(".pdf-page canvas").waitFor();
  const highlights = view.locator(".pdf-page .highlight");
  assert.ok(await highlights.count() > 0, "no highlight on the rendered PDF page");
  assert.equal(fold((await highlights.allTextContents()).join("")), fold(cited), "the highlight is not the cited span");
  const [canvas, mark] = [await view.locator("canvas").boundingBox(), await highlights.first().boundingBox()];
  assert.ok(mark.width > 0 && mark.height > 0 && mark.x >= canvas.x - 1 && mark.y >= canvas.y - 1 &&
    mark.x + mark.width <= canvas.x + canvas.width + 1 && mark.y + mark.height <= canvas.y + canvas.height + 1,
    `the highlight ${JSON.stringify(mark)} is not on the page ${JSON.stringify(canvas)}`);
  assert.ok(await highlights.first().isVisible(), "the highlight is not visible");
}

// A desktop-sized page of its own, watched for console errors, with the server ready.
async function openPage(label) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  watch(page, label);
  await page.goto(base);
  await page.getByText(/^Ready · /).waitFor();
  return { context, page };
}

async function ask(page, question) {
  const before = await page.locator(".message.assistant").count();
  await page.getByLabel("Your question").fill(question);
  await page.getByRole("button", { name: "Ask", exact: true }).click();
  const answer = page.locator(".message.assistant").nth(before);
  await answer.locator(".details").waitFor({ timeout: 60_000 });
  return answer;
}

async function newCollection(page, name, files) {
  await page.getByLabel("New collection").fill(name);
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await page.locator('#collections button[aria-current="true"]', { hasText: name }).waitFor();
  await page.setInputFiles("#file-input", files);
  await page.locator("#uploads li").first().locator(`.upload-file[data-status="indexed"]`).nth(files.length - 1)
    .waitFor({ timeout: 120_000 });
}

before(async () => {
  data = join(work, "data");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(data, { recursive: true });
  mkdirSync(artifacts, { recursive: true });
  const home = process.env.KOTAE_DATA ?? join(process.env.XDG_DATA_HOME ?? join(homedir(), ".local/share"), "kotae");
  symlinkSync(join(home, "models"), join(data, "models"));
  // What scripts/start indexes: the example documents, from disk, by the CLI.
  execFileSync(kotae, ["index", examples, "--collection", "examples", "--data", data], { stdio: "ignore" });
  ({ child: server, url: base } = await startServer(data));
  browser = await chromium.launch({ executablePath: process.env.KOTAE_CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
});

after(async () => {
  if (serverNoise.length) console.log(`server stderr lines that are not JSON:\n${serverNoise.join("\n")}`);
  await browser?.close();
  if (server && server.exitCode === null) server.kill("SIGTERM");
});

test("upload, ask, stream, cite: the whole user journey", async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  watch(page, "desktop");
  const loadedScripts = [];
  page.on("request", r => { if (r.resourceType() === "script") loadedScripts.push(r.url()); });
  await page.goto(base);
  await page.getByText(/^Ready · /).waitFor();

  // A collection, created and picked.
  await page.getByLabel("New collection").fill("e2e");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await page.locator('#collections button[aria-current="true"]', { hasText: "e2e" }).waitFor();
  // A server without keys: its one caller is the local operator, an admin, offered everything.
  const roles = await page.evaluate(async () => (await (await fetch("/v1/collections")).json()).data.map(c => [c.name, c.role]));
  assert.ok(roles.some(([name]) => name === "e2e") && roles.every(([, role]) => role === "admin"), JSON.stringify(roles));
  assert.equal(await page.evaluate(async () => (await (await fetch("/v1/collections/e2e")).json()).role), "admin");
  for (const offered of ["#drop-zone", "#share-collection", "#rename-collection", "#delete-collection"])
    assert.ok(await page.locator(offered).isVisible(), `${offered} is not offered to the admin`);

  // A PDF and an HTML file dropped at once; each file's progress comes from the job.
  await dropFiles(page, [pdf, html]);
  const uploads = page.locator("#uploads .upload-file");
  await page.locator('#uploads .upload-file[data-status="indexed"]').nth(1).waitFor({ timeout: 120_000 });
  assert.deepEqual((await uploads.allTextContents()).map(t => /indexed, \d+ chunks/.test(t)), [true, true]);
  await page.locator("#documents tr", { hasText: "Appropriate Uses For SQLite" }).waitFor();
  assert.equal(await page.locator("#documents tr").count(), 2);

  // PDF.js is not part of the page: nothing of it has loaded before a PDF is opened.
  assert.deepEqual(loadedScripts.filter(u => /pdf/.test(u)), [], "PDF.js loaded before a PDF was opened");

  // A broken PDF: its own row says it failed and why; the collection is unchanged.
  const broken = join(work, "broken.pdf");
  writeFileSync(broken, "%PDF-1.7\nthis is not a PDF body\n");
  await page.setInputFiles("#file-input", broken);
  const failed = page.locator('#uploads .upload-file[data-status="failed"]');
  await failed.waitFor({ timeout: 60_000 });
  assert.match(await failed.locator(".file-error").textContent(), /corrupt|PDF/i);
  consoleErrors.length = 0;  // the job's own failure is not the page's

  // The question, answered from the PDF; the answer's text arrives while it streams.
  await page.evaluate(() => {
    window.streamedPieces = 0;
    new MutationObserver(records => {
      for (const r of records) {
        const message = r.target.parentElement?.closest?.(".message.assistant") ?? r.target.closest?.(".message.assistant");
        if (message?.classList.contains("streaming") && r.addedNodes.length) window.streamedPieces++;
      }
    }).observe(document.getElementById("messages"), { childList: true, subtree: true });
  });
  await page.getByLabel("Your question").fill("Can SQLite be used as the database of a website?");
  await page.keyboard.press("Enter");
  const answer = page.locator(".message.assistant").last();
  await answer.locator(".details").waitFor({ timeout: 60_000 });
  assert.ok(await page.evaluate(() => window.streamedPieces) > 0, "no answer text arrived before the answer was complete");
  const pdfCites = answer.locator('button.cite[aria-label*="Appropriate Uses For SQLite"]');
  assert.ok(await pdfCites.count() > 0, `no citation of the PDF in: ${await answer.textContent()}`);

  // The citation opens the side panel: the span highlighted, on the PDF page that holds it.
  await pdfCites.first().click();
  const panel = page.locator("#source-panel");
  await panel.waitFor();
  await panel.locator(".pdf-view[data-open-ms]").waitFor({ timeout: 30_000 });
  const cited = squash(await panel.locator("mark#cited-span").textContent());
  assert.ok(cited.length > 20, `highlighted span too short: "${cited}"`);
  const pageNumber = Number(await panel.locator(".page-badge").getAttribute("data-page"));
  assert.ok(pageNumber >= 1, "no page shown for a PDF citation");
  const pageText = squash(execFileSync("pdftotext", ["-f", String(pageNumber), "-l", String(pageNumber), pdf, "-"]).toString());
  const opening = cited.split(" ").slice(0, 6).join(" ");
  assert.ok(pageText.includes(opening), `page ${pageNumber} of the PDF does not hold "${opening}"`);
  await checkPdfHighlight(page, cited);
  timings.first_pdf_open_ms = Number(await panel.locator(".pdf-view").getAttribute("data-open-ms"));

  // Per-answer details: back-end, retrieval mode, cache and the stage timeline.
  await answer.locator(".details summary").click();
  assert.equal(await answer.locator('[data-field="backend"]').textContent(), "extractive");
  assert.equal(await answer.locator('[data-field="mode"]').textContent(), "hybrid");
  assert.equal(await answer.locator('[data-field="cache"]').textContent(), "miss");
  assert.equal(await answer.locator(".timeline .bar").count(), 4);

  // Keyboard only: Escape closes the panel and gives focus back; Enter on a citation reopens it.
  await page.keyboard.press("Escape");
  assert.ok(await panel.isHidden());
  assert.ok(await pdfCites.first().evaluate(b => b === document.activeElement), "focus did not return to the citation");
  await page.keyboard.press("Enter");
  await panel.waitFor();

  // A follow-up keeps the conversation; the same first question in a new conversation is a cache hit.
  await page.getByLabel("Your question").fill("Is it a good choice for an embedded device?");
  await page.keyboard.press("Enter");
  await page.locator(".message.assistant").nth(1).locator(".details").waitFor({ timeout: 60_000 });
  await page.getByRole("button", { name: "New conversation" }).click();
  await page.getByLabel("Your question").fill("Can SQLite be used as the database of a website?");
  await page.getByRole("button", { name: "Ask", exact: true }).click();
  const again = page.locator(".message.assistant").last();
  await again.locator(".details").waitFor({ timeout: 60_000 });
  assert.equal(await again.locator('[data-field="cache"]').textContent(), "hit (answered from the cache)");

  // The final state, kept as the test's artefact.
  await again.locator("button.cite").first().click();
  await page.screenshot({ path: join(artifacts, "final.png"), fullPage: true });
  assert.deepEqual(consoleErrors, []);

  // Every control is labelled, and text is readable against its background (WCAG AA 4.5:1).
  const problems = await page.evaluate(() => {
    const out = [];
    const name = el => el.getAttribute("aria-label") || (el.labels && [...el.labels].map(l => l.textContent).join(" ").trim())
      || el.getAttribute("title") || el.textContent.trim() || (el.getAttribute("aria-labelledby") && document.getElementById(el.getAttribute("aria-labelledby"))?.textContent);
    for (const el of document.querySelectorAll("button, input, select, textarea")) if (!name(el)) out.push(`unlabelled ${el.outerHTML.slice(0, 80)}`);
    const rgb = s => (s.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]) => { const f = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
    const background = el => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3); } return [255, 255, 255]; };
    for (const el of document.querySelectorAll("body *")) {
      if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
      const style = getComputedStyle(el);
      if (style.visibility === "hidden" || el.closest("[hidden]") || !el.getClientRects().length || el.closest(".visually-hidden")) continue;
      const [a, b] = [lum(rgb(style.color)), lum(background(el))];
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      if (ratio < 4.5) out.push(`contrast ${ratio.toFixed(2)} for "${el.textContent.trim().slice(0, 30)}"`);
    }
    return out;
  });
  assert.deepEqual(problems, []);

  // A name that is taken: the server's message, shown plainly.
  await page.getByLabel("New collection").fill("e2e");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await page.locator("#alert", { hasText: /exists already/ }).waitFor();
  consoleErrors.length = 0;  // Chromium logs the deliberate 409
  await context.close();
});

test("scripts/start's journey: the example question, a PDF indexed from disk opened at its highlighted span", async () => {
  const { context, page } = await openPage("examples");
  await page.locator("#collections button", { hasText: "examples" }).click();
  const answer = await ask(page, "Can SQLite be used as the database of a website?");
  const pdfCite = answer.locator('button.cite[aria-label*="Appropriate Uses For SQLite"]').first();
  await pdfCite.click();
  await page.locator("#source-panel .pdf-view[data-open-ms]").waitFor({ timeout: 30_000 });
  await checkPdfHighlight(page, await page.locator("mark#cited-span").textContent());
  await page.screenshot({ path: join(artifacts, "examples.png") });
  await context.close();
  assert.deepEqual(consoleErrors, []);
});

test("a 20-page PDF opens at its cited page, highlighted (timed)", async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  // The PDF, printed by this Chromium: one island per page, each lighthouse its own colour.
  const printer = await context.newPage();
  const colours = ["amber", "blue", "crimson", "dark green", "ebony", "fawn", "grey", "hazel", "indigo", "jade",
    "khaki", "lilac", "mauve", "navy", "olive", "pink", "quartz", "rust", "sand", "teal"];
  const islands = colours.map((_, i) => `Isla${String.fromCharCode(65 + i)}${"nmrstv"[i % 6]}o`);
  await printer.setContent("<title>Island lighthouses</title>" + colours.map((colour, i) => `<section style="page-break-after: always"><h1>Chapter ${i + 1}</h1>
    <p>The lighthouse on ${islands[i]} island is painted ${colour} from its base to its lantern.</p>
    <p>${"Keepers of the light log the weather, the ships that pass and the oil they burn every night. ".repeat(6)}</p></section>`).join(""));
  const long = join(work, "islands.pdf");
  await printer.pdf({ path: long, format: "A4" });
  await printer.close();
  assert.equal(Number(/Pages:\s+(\d+)/.exec(execFileSync("pdfinfo", [long]).toString())?.[1]), 20);

  const page = await context.newPage();
  watch(page, "long-pdf");
  await page.goto(base);
  await page.getByText(/^Ready · /).waitFor();
  await newCollection(page, "islands", [long]);
  const answer = await ask(page, `What colour is the lighthouse on ${islands[13]} island?`);
  // The citation that follows the sentence about that island (an extractive answer quotes others too).
  const index = await answer.locator("button.cite").evaluateAll((buttons, island) => buttons.findIndex(b => {
    let before = "";
    for (let n = b.previousSibling; n && n.nodeName !== "BUTTON"; n = n.previousSibling) before = n.textContent + before;
    return before.includes(island);
  }), islands[13]);
  assert.ok(index >= 0, `no citation after the sentence about ${islands[13]}: ${await answer.textContent()}`);
  const cite = answer.locator("button.cite").nth(index);
  const opened = async () => {
    await cite.click();
    const view = page.locator("#source-panel .pdf-view[data-open-ms]");
    await view.waitFor({ timeout: 30_000 });
    return Number(await view.getAttribute("data-open-ms"));
  };
  const cold = await opened();
  await checkPdfHighlight(page, await page.locator("mark#cited-span").textContent());
  assert.equal(await page.locator(".page-badge").getAttribute("data-page"), "14");
  assert.match(squash(execFileSync("pdftotext", ["-f", "14", "-l", "14", long, "-"]).toString()), new RegExp(islands[13]));
  await page.keyboard.press("Escape");
  const warm = [];
  for (let i = 0; i < 3; ++i) {
    warm.push(await opened());
    await page.keyboard.press("Escape");
  }
  timings.twenty_page_pdf = { pages: 20, cited_page: 14, cold_ms: cold, warm_ms: warm, target_ms: 500 };
  writeFileSync(join(artifacts, "pdf_open.json"), JSON.stringify(timings, null, 1) + "\n");
  console.log(`citation click -> highlighted PDF page: ${JSON.stringify(timings)}`);
  await cite.click();
  await page.locator("#source-panel .pdf-view[data-open-ms]").waitFor();
  await page.screenshot({ path: join(artifacts, "pdf-20-pages.png") });
  await context.close();
  assert.deepEqual(consoleErrors, []);
});

test("answers are Markdown; hostile Markdown and HTML in an answer or a document never run", async () => {
  const { context, page } = await openPage("hostile");
  const dialogs = [];
  page.on("dialog", d => { dialogs.push(d.message()); void d.dismiss(); });
  const txt = join(work, "kettle.txt"), htmlFile = join(work, "kettle.html"), md = join(work, "kettle.md");
  writeFileSync(txt, "Kettle care.\n\nTo descale the kettle element, **always unplug it** first and run `descale --weekly` on " +
    "the element <img src=x onerror=\"window.pwned='img'\"> every week.\n\n" +
    "<script>window.pwned='script'</script>The kettle handle stays cool <a href=\"javascript:window.pwned='link'\">here</a> while it boils.\n");
  writeFileSync(htmlFile, "<html><head><title>Kettle lid</title><script>window.pwned='html'</script></head><body>" +
    "<p onmouseover=\"window.pwned='attr'\">To clean the kettle lid, open it with the button &lt;script&gt;alert(1)&lt;/script&gt; on the top.</p></body></html>");
  writeFileSync(md, "# Kettle base\n\nTo clean the kettle base <iframe src=\"javascript:window.pwned='iframe'\"></iframe> wipe it " +
    "with a [dry cloth](javascript:window.pwned='md-link') and *never* immerse it.\n");
  await newCollection(page, "hostile", [txt, htmlFile, md]);
  const answer = await ask(page, "How often should the kettle element be descaled?");
  const text = answer.locator(".text");
  // Markdown rendered: emphasis and code from the quoted document.
  assert.ok(await text.locator("strong", { hasText: "always unplug it" }).count() > 0, `no bold in: ${await text.innerHTML()}`);
  assert.ok(await text.locator("code", { hasText: "descale --weekly" }).count() > 0, "no code span");
  assert.match(await text.textContent(), /<img src=x onerror=/, "the document's raw HTML is not shown as text");
  // Nothing active came through: no elements that run or load, no javascript: links.
  const active = await page.evaluate(() => [...document.querySelectorAll("#messages *")].filter(e =>
    /^(SCRIPT|IMG|IFRAME|OBJECT|EMBED|STYLE|FORM|INPUT|SVG|MATH)$/i.test(e.tagName) || [...e.attributes].some(a => /^on/i.test(a.name)) ||
    /^\s*javascript:/i.test(e.getAttribute("href") ?? "")).map(e => e.outerHTML.slice(0, 80)));
  assert.deepEqual(active, []);
  // Every citation opens its document's text: the markup shown as text, never run.
  for (const button of await text.locator("button.cite").all()) {
    await button.click();
    await page.locator("#source-panel mark#cited-span").waitFor();
    await page.locator("#source-panel .source-text").hover();
    await page.keyboard.press("Escape");
  }
  assert.equal(await page.evaluate(() => window.pwned), undefined, "hostile content ran");
  assert.deepEqual(dialogs, []);
  await page.screenshot({ path: join(artifacts, "hostile.png"), fullPage: true });
  await context.close();
  assert.deepEqual(consoleErrors, []);
});

test("search mode: hits with their document, page and the query's words marked, each opening its document", async () => {
  const { context, page } = await openPage("search");
  await page.locator("#collections button", { hasText: "e2e" }).click();
  await page.getByRole("button", { name: "Search mode" }).click();
  await page.getByLabel("Your question").fill("website traffic");
  await page.keyboard.press("Enter");
  const hits = page.locator(".message.search .hit");
  await hits.first().waitFor();
  assert.ok(await hits.count() >= 2);
  const words = new Set((await page.locator(".hit mark.word").allTextContents()).map(w => w.toLowerCase()));
  assert.ok([...words].every(w => w === "website" || w === "traffic") && words.size > 0, [...words].join(","));
  const pdfHit = hits.filter({ hasText: "Appropriate Uses For SQLite" }).first();
  assert.match(await pdfHit.locator(".hit-open").textContent(), /page \d/);
  await pdfHit.locator(".hit-open").click();
  await page.locator("#source-panel .pdf-view[data-open-ms]").waitFor({ timeout: 30_000 });
  assert.ok(await page.locator("#source-panel .pdf-page .highlight").count() > 0, "the hit is not highlighted in the PDF");
  const htmlHit = hits.filter({ hasText: "SQLite" }).filter({ hasNotText: "Appropriate Uses" }).first();
  if (await htmlHit.count()) {
    await htmlHit.locator(".hit-open").click();
    await page.locator("#source-panel .document-view mark#cited-span").waitFor();
  }
  await page.screenshot({ path: join(artifacts, "search.png") });
  await context.close();
  assert.deepEqual(consoleErrors, []);
});

test("conversations are kept by the server: listed, resumed after a restart, followed up, renamed, deleted", async () => {
  server.kill("SIGTERM");
  await new Promise(resolve => server.once("exit", resolve));
  ({ child: server, url: base } = await startServer(data));
  const { context, page } = await openPage("conversations");
  await page.locator("#collections button", { hasText: "e2e" }).click();
  const first = page.locator("#conversations li", { hasText: "Can SQLite be used as the database of a website?" })
    .filter({ hasText: "2 turns" });
  await first.waitFor();
  assert.match(await first.textContent(), /\d{4}/, "no date shown");
  await first.locator("button.open").click();
  await page.locator(".message.user", { hasText: "Is it a good choice for an embedded device?" }).waitFor();
  assert.equal(await page.locator(".message.assistant").count(), 2);
  assert.ok(await page.locator(".message.assistant").first().locator("button.cite").count() > 0, "stored citations lost");
  const followUp = await ask(page, "Does it need a separate server process?");
  assert.ok(await followUp.locator("button.cite").count() > 0);
  await page.locator("#conversations li", { hasText: "3 turns" }).waitFor();

  await page.locator("#conversations li", { hasText: "3 turns" }).getByRole("button", { name: /^Rename/ }).click();
  await page.getByLabel("New name").fill("SQLite for websites");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.locator("#conversations li", { hasText: "SQLite for websites" }).waitFor();

  const count = await page.locator("#conversations li").count();
  page.once("dialog", d => void d.accept());
  await page.locator("#conversations li", { hasText: "1 turn" }).first().getByRole("button", { name: /^Delete/ }).click();
  await page.waitForFunction(n => document.querySelectorAll("#conversations li").length === n - 1, count);
  await page.reload();
  await page.getByText(/^Ready · /).waitFor();
  await page.locator("#conversations li", { hasText: "SQLite for websites" }).waitFor();
  assert.equal(await page.locator(".message.user").count(), 3, "the open conversation was not resumed on reload");
  await page.screenshot({ path: join(artifacts, "conversations.png") });
  await context.close();
  assert.deepEqual(consoleErrors, []);
});

test("settings are kept per browser", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  watch(page, "settings");
  await page.goto(base);
  await page.getByText(/^Ready · /).waitFor();
  await page.getByRole("button", { name: "Settings" }).click();
  await page.getByLabel("Mode", { exact: true }).selectOption("bm25");
  await page.getByLabel("Sources (k)").fill("3");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  // The dialog's close event, which saves, is a task of its own after the click: wait for it, or a
  // reload on a busy machine can come first.
  await page.waitForFunction(() => JSON.parse(localStorage.getItem("kotae.settings") ?? "{}").mode === "bm25");
  await page.reload();
  await page.getByText(/^Ready · /).waitFor();
  await page.getByRole("button", { name: "Settings" }).click();
  assert.equal(await page.getByLabel("Mode", { exact: true }).inputValue(), "bm25");
  assert.equal(await page.getByLabel("Sources (k)").inputValue(), "3");
  // The back-ends (with their generator models) and the reranker are the server's own.
  const ready = await page.evaluate(async () => (await (await fetch("/readyz")).json()));
  const reported = await page.evaluate(async () => (await (await fetch("/v1/models")).json()).data);
  const offered = (await page.locator("#set-backend option").allTextContents()).slice(1);
  assert.deepEqual(offered.map(o => o.split(/ [·(]/)[0]), ready.backends.map(b => b.name));
  const reranker = reported.find(m => m.kind === "rerank");
  assert.equal(await page.locator("#set-rerank").isDisabled(), !reranker);
  await page.keyboard.press("Escape");
  // A new collection's embedder: one of the installed models, as the server lists them.
  const embedders = reported.filter(m => m.kind === "embedding" && !m.alias_of).map(m => m.id);
  assert.deepEqual((await page.locator("#new-embedder option").allTextContents()).slice(1), embedders);
  const chosen = embedders[embedders.length - 1];
  await page.getByLabel("Embedder (installed models)").selectOption(chosen);
  await page.getByLabel("New collection").fill("chosen-embedder");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await page.locator('#collections button[aria-current="true"]', { hasText: "chosen-embedder" }).waitFor();
  assert.equal(await page.evaluate(async () => (await (await fetch("/v1/collections/chosen-embedder")).json()).embedder), chosen);
  await page.evaluate(() => fetch("/v1/collections/chosen-embedder", { method: "DELETE" }));  // the next tests pick the first
  await context.close();
  assert.deepEqual(consoleErrors, []);
});

test("a narrow screen: the library on demand, the answer and its source", async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  watch(page, "narrow");
  await page.goto(base);
  await page.getByText(/^Ready · /).waitFor();
  assert.ok(await page.locator("#library").isHidden());
  await page.getByRole("button", { name: "Collections" }).click();
  await page.locator('#collections button[aria-current="true"]', { hasText: "e2e" }).waitFor();
  await page.getByLabel("Your question").fill("Is SQLite threadsafe?");
  await page.getByRole("button", { name: "Ask", exact: true }).click();
  const answer = page.locator(".message.assistant").last();
  await answer.locator(".details").waitFor({ timeout: 60_000 });
  await answer.locator("button.cite").first().tap();
  await page.locator("mark#cited-span").waitFor();
  const wide = await page.evaluate(() => [...document.querySelectorAll("body *")]
    .filter(e => e.getBoundingClientRect().right > 391 && getComputedStyle(e).position !== "fixed")
    .map(e => `${e.tagName.toLowerCase()}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().right)}px`));
  assert.deepEqual(wide, [], "the page scrolls sideways");
  await page.screenshot({ path: join(artifacts, "narrow.png") });
  await context.close();
  assert.deepEqual(consoleErrors, []);
});

test("an unreachable server is said plainly", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(base);
  await page.getByText(/^Ready · /).waitFor();
  server.kill("SIGTERM");
  await new Promise(resolve => server.once("exit", resolve));
  await page.getByLabel("Your question").fill("Is SQLite threadsafe?");
  await page.getByRole("button", { name: "Ask", exact: true }).click();
  await page.locator("#alert", { hasText: "Cannot reach the Kotae server" }).waitFor();
  await page.locator("#server-state", { hasText: "unreachable" }).waitFor();
  await context.close();
});
