// The PDF view of the source panel, loaded only when a PDF is opened: PDF.js renders the cited page on
// a canvas under its text layer, and the cited span is marked in the text layer where its text matches.

import { getDocument, GlobalWorkerOptions, TextLayer, type PDFDocumentProxy } from "pdfjs-dist";
import { type Box } from "./api";
import { boxOverlay } from "./ocr_boxes";
import { findInItems } from "./text_match";

GlobalWorkerOptions.workerSrc = "/assets/pdf.worker.min.mjs";  // served by the binary, like the page

const opened = new Map<string, Promise<PDFDocumentProxy>>();  // by document key; the last few kept

function open(key: string, load: () => Promise<ArrayBuffer>): Promise<PDFDocumentProxy> {
  let document = opened.get(key);
  if (!document) {
    document = load().then(data => getDocument({ data: new Uint8Array(data) }).promise);
    document.catch(() => opened.delete(key));
    opened.set(key, document);
    if (opened.size > 4) {
      const [oldest, doc] = opened.entries().next().value!;
      opened.delete(oldest);
      void doc.then(d => d.loadingTask.destroy(), () => undefined);
    }
  }
  return document;
}

export interface ShownPage { page: number; highlighted: string; pages: number }

// Renders into `into` the first page of [first, last] that holds `cited` (or `first` when none does),
// `cited` marked; scales the page to the panel's width.
export async function showPdfPage(into: HTMLElement, key: string, load: () => Promise<ArrayBuffer>,
                                  first: number, last: number, cited: string, boxes: Box[] = []): Promise<ShownPage> {
  const pdf = await open(key, load);
  first = Math.min(Math.max(1, first), pdf.numPages);
  last = Math.min(Math.max(first, last), pdf.numPages);
  // OCR'd text (a scanned page) has no text layer to search: its boxes say where it is.
  if (boxes.length) first = last = Math.min(Math.max(1, boxes[0]!.page), pdf.numPages);
  let chosen = first, content = null;
  for (let n = first; n <= last; ++n) {
    const text = await (await pdf.getPage(n)).getTextContent();
    const holds = findInItems(text.items.map(item => ("str" in item ? item.str : "")), cited) !== null;
    if (holds || n === first) { chosen = n; content = text; }
    if (holds) break;
  }
  const page = await pdf.getPage(chosen);
  const base = page.getViewport({ scale: 1 });
  const viewport = page.getViewport({ scale: Math.max(0.5, (into.clientWidth || base.width) / base.width) });
  const ratio = window.devicePixelRatio || 1;
  const canvas = document.createElement("canvas");
  canvas.width = Math.floor(viewport.width * ratio);
  canvas.height = Math.floor(viewport.height * ratio);
  canvas.style.width = `${Math.floor(viewport.width)}px`;
  canvas.style.height = `${Math.floor(viewport.height)}px`;
  const layer = document.createElement("div");
  layer.className = "textLayer";
  const sheet = document.createElement("div");
  sheet.className = "pdf-page";
  sheet.style.setProperty("--total-scale-factor", String(viewport.scale));
  sheet.style.width = canvas.style.width;
  sheet.style.height = canvas.style.height;
  sheet.append(canvas, layer);
  into.replaceChildren(sheet);
  const textLayer = new TextLayer({ textContentSource: content!, container: layer, viewport });
  await Promise.all([
    page.render({ canvas, viewport, transform: ratio === 1 ? undefined : [ratio, 0, 0, ratio, 0, 0] }).promise,
    textLayer.render(),
  ]);
  let highlighted = "";
  const items = textLayer.textContentItemsStr;  // index i is textDivs[i]'s text
  for (const r of findInItems(items, cited) ?? []) {
    const div = textLayer.textDivs[r.item];
    const text = items[r.item];
    if (!div || text === undefined) continue;
    const mark = document.createElement("span");
    mark.className = "highlight";
    mark.textContent = text.slice(r.from, r.to);
    div.replaceChildren(text.slice(0, r.from), mark, text.slice(r.to));
    highlighted += mark.textContent;
  }
  for (const box of boxes.filter(b => b.page === chosen)) {
    sheet.append(boxOverlay(box));
    highlighted ||= cited;
  }
  (sheet.querySelector(".highlight") ?? sheet.querySelector(".ocr-box"))?.scrollIntoView({ block: "center" });
  return { page: chosen, highlighted, pages: pdf.numPages };
}
