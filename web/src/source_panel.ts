// The side panel: the document a citation or a search hit points into, with its span highlighted. A
// PDF is shown as the page that holds the span, rendered by PDF.js (loaded on the first PDF); other
// documents as their indexed text scrolled to the span. A document the server no longer has falls
// back to the chunk's own text.

import { Api, type Box, type Citation, type Source } from "./api";
import { append, byId, formatMs, h } from "./dom";
import { boxOverlay } from "./ocr_boxes";
import { placeOf } from "./place";
import { splitAtByteSpan } from "./text_spans";

// What the panel opens: a citation's or a search hit's bytes of one document.
export interface Span {
  label: string;  // "Source [2]", "Search hit 3"
  document_id: number; document: string; title: string; format: string;
  page: number; page_last: number;  // 0: no pages
  start: number; end: number; text: string;
  heading_path?: string[];
  boxes?: Box[];  // OCR'd text: its lines' boxes, drawn over the page or image
  chunk?: { start: number; text: string };  // the chunk around the span, when the document cannot be read
}

export function citationSpan(citation: Citation, sources: Source[]): Span {
  const source = sources.find(s => s.number === citation.number);
  return {
    label: `Source [${citation.number}]`, document_id: citation.document_id, document: citation.document,
    title: citation.title, format: citation.format, page: citation.page ?? 0, page_last: citation.page_last ?? citation.page ?? 0,
    start: citation.start, end: citation.end, text: citation.text, heading_path: source?.heading_path, boxes: citation.boxes,
    chunk: source ? { start: source.start, text: source.text } : undefined,
  };
}

// Images a browser draws; TIFF scans are shown as their text.
const imageFormats = new Map([["png", "image/png"], ["jpg", "image/jpeg"], ["webp", "image/webp"]]);

// A scanned image with its cited lines' boxes over it, scaled to the panel.
function scannedImage(image: Blob, boxes: Box[]): HTMLElement {
  const url = URL.createObjectURL(image);
  const img = h("img", { src: url, alt: "The scanned image", class: "scan" }) as HTMLImageElement;
  img.addEventListener("load", () => URL.revokeObjectURL(url), { once: true });
  const sheet = h("div", { class: "scan-page" }, img);
  for (const box of boxes) sheet.append(boxOverlay(box));
  return sheet;
}

export class SourcePanel {
  private opener: HTMLElement | null = null;
  private shown = 0;  // the latest show(): an earlier one still loading gives way
  private readonly panel = byId("source-panel");
  private readonly body = byId("source-body");

  constructor(private readonly api: Api, private readonly collection: () => string | null) {
    byId("close-source").addEventListener("click", () => this.close());
    document.addEventListener("keydown", e => { if (e.key === "Escape" && !this.panel.hidden) this.close(); });
  }

  async show(span: Span, opener: HTMLElement, sources: Source[] = []): Promise<void> {
    const clicked = performance.now(), mine = ++this.shown;
    this.opener?.setAttribute("aria-pressed", "false");
    this.opener = opener;
    opener.setAttribute("aria-pressed", "true");
    const badge = span.page ? h("span", { class: "page-badge", "data-page": span.page }, `Page ${span.page}`) : null;
    const view = h("div", { class: span.format === "pdf" ? "pdf-view" : "document-view" });
    const quote = h("mark", { id: "cited-span" }, span.text);
    byId("source-heading").textContent = span.label;
    this.body.replaceChildren();
    append(this.body,
      h("h3", { class: "source-title" }, span.title || span.document),
      h("p", { class: "source-meta" }, badge, badge ? " " : null, span.document,
        span.heading_path?.length ? h("span", {}, ` · ${span.heading_path.join(" › ")}`) : null),
      view,
      span.format === "pdf" ? h("blockquote", { class: "source-text", "aria-label": "The cited text" }, quote) : null,
      sources.length > 1 ? h("div", { class: "other-sources" }, h("strong", {}, "All sources of this answer"),
        h("ol", {}, ...sources.map(s => h("li", { value: s.number },
          `${s.title || s.document}${placeOf({ format: s.format, page: s.page_first, page_last: s.page_first, table: s.table, row_first: s.row_first, row_last: s.row_last })} (relevance ${s.relevance.toFixed(2)})`)))) : null);
    this.panel.hidden = false;
    this.panel.parentElement?.classList.add("with-source");
    this.panel.focus();

    const collection = this.collection();
    if (span.format === "pdf" && collection && span.document_id) {
      view.append(h("p", { class: "hint" }, "Opening the PDF…"));
      try {
        const { showPdfPage } = await import("./pdf_view");
        const shown = await showPdfPage(view, `${collection}/${span.document_id}`,
          () => this.api.documentFile(collection, span.document_id), span.page || 1, span.page_last || span.page || 1, span.text,
          span.boxes ?? []);
        if (mine !== this.shown) return;
        if (badge) { badge.dataset.page = String(shown.page); badge.textContent = `Page ${shown.page} of ${shown.pages}`; }
        view.dataset.openMs = (performance.now() - clicked).toFixed(1);
        view.dataset.highlighted = shown.highlighted;
        view.append(h("p", { class: "hint" }, shown.highlighted ? `Opened in ${formatMs(performance.now() - clicked)}.`
          : "The cited words could not be found on the rendered page; they are quoted below."));
        return;
      } catch (e) {
        if (mine !== this.shown) return;
        view.replaceChildren(h("p", { class: "hint" }, `The PDF cannot be shown (${e instanceof Error ? e.message : String(e)}); its text follows.`));
      }
    }
    if (imageFormats.has(span.format) && collection && span.document_id && span.boxes?.length) {
      try {
        const bytes = await this.api.documentFile(collection, span.document_id);
        if (mine !== this.shown) return;
        view.append(scannedImage(new Blob([bytes], { type: imageFormats.get(span.format) }), span.boxes));
        view.dataset.openMs = (performance.now() - clicked).toFixed(1);
      } catch { /* the text follows */ }
    }
    await this.showText(span, view, collection, mine);
  }

  // The document's text with the span marked, or the chunk's when the document cannot be read.
  private async showText(span: Span, view: HTMLElement, collection: string | null, mine: number): Promise<void> {
    let text = span.chunk?.text ?? span.text, offset = span.chunk?.start ?? span.start;
    if (collection && span.document_id) {
      try {
        text = (await this.api.documentText(collection, span.document_id)).text;
        offset = 0;
      } catch { /* shown from the chunk */ }
    }
    if (mine !== this.shown) return;
    const [before, cited, after] = splitAtByteSpan(text, offset, span.start, span.end);
    const mark = span.format === "pdf" ? h("mark", {}, cited) : h("mark", { id: "cited-span" }, cited);
    view.append(h("div", { class: "source-text", tabindex: 0, "aria-label": "The document's text, the span highlighted" },
      before, mark, after));
    mark.scrollIntoView({ block: "center" });
  }

  close(): void {
    this.panel.hidden = true;
    this.panel.parentElement?.classList.remove("with-source");
    this.opener?.setAttribute("aria-pressed", "false");
    this.opener?.focus();
    this.opener = null;
  }
}
