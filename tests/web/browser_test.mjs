// The web page end to end: Debian's Chromium, driven by playwright-core, against the real
// `kotae serve` on a loopback port. A user creates a collection, drops a PDF and an HTML file, waits
// for the job, asks a question answered by the PDF, watches the answer stream in with citations,
// clicks one and sees the cited span highlighted with the PDF's page, which must hold that text.
// Also: per-file upload errors, API errors and an unreachable server shown plainly, settings kept
// per browser, keyboard only, a narrow screen, labels and contrast, no console errors.
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

let server, base, browser;
const consoleErrors = [];

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

before(async () => {
  const data = join(work, "data");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(data, { recursive: true });
  mkdirSync(artifacts, { recursive: true });
  const home = process.env.KOTAE_DATA ?? join(process.env.XDG_DATA_HOME ?? join(homedir(), ".local/share"), "kotae");
  symlinkSync(join(home, "models"), join(data, "models"));
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
  await page.goto(base);
  await page.getByText(/^Ready · /).waitFor();

  // A collection, created and picked.
  await page.getByLabel("New collection").fill("e2e");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await page.locator('#collections button[aria-current="true"]', { hasText: "e2e" }).waitFor();

  // A PDF and an HTML file dropped at once; each file's progress comes from the job.
  await dropFiles(page, [pdf, html]);
  const uploads = page.locator("#uploads .upload-file");
  await page.locator('#uploads .upload-file[data-status="indexed"]').nth(1).waitFor({ timeout: 120_000 });
  assert.deepEqual((await uploads.allTextContents()).map(t => /indexed, \d+ chunks/.test(t)), [true, true]);
  await page.locator("#documents tr", { hasText: "Appropriate Uses For SQLite" }).waitFor();
  assert.equal(await page.locator("#documents tr").count(), 2);

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
  const cited = squash(await panel.locator("mark#cited-span").textContent());
  assert.ok(cited.length > 20, `highlighted span too short: "${cited}"`);
  const pageNumber = Number(await panel.locator(".page-badge").getAttribute("data-page"));
  assert.ok(pageNumber >= 1, "no page shown for a PDF citation");
  const pageText = squash(execFileSync("pdftotext", ["-f", String(pageNumber), "-l", String(pageNumber), pdf, "-"]).toString());
  const opening = cited.split(" ").slice(0, 6).join(" ");
  assert.ok(pageText.includes(opening), `page ${pageNumber} of the PDF does not hold "${opening}"`);
  assert.match(await panel.textContent(), new RegExp(`open page ${pageNumber}`));

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

test("settings are kept per browser", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  watch(page, "settings");
  await page.goto(base);
  await page.getByText(/^Ready · /).waitFor();
  await page.getByRole("button", { name: "Settings" }).click();
  await page.getByLabel("Mode").selectOption("bm25");
  await page.getByLabel("Sources (k)").fill("3");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  // The dialog's close event, which saves, is a task of its own after the click: wait for it, or a
  // reload on a busy machine can come first.
  await page.waitForFunction(() => JSON.parse(localStorage.getItem("kotae.settings") ?? "{}").mode === "bm25");
  await page.reload();
  await page.getByText(/^Ready · /).waitFor();
  await page.getByRole("button", { name: "Settings" }).click();
  assert.equal(await page.getByLabel("Mode").inputValue(), "bm25");
  assert.equal(await page.getByLabel("Sources (k)").inputValue(), "3");
  await page.keyboard.press("Escape");
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
