// The side panel: the cited source's title, page and chunk text with the cited span highlighted.

import type { Citation, Source } from "./api";
import { append, byId, h } from "./dom";
import { splitAtByteSpan } from "./text_spans";

export class SourcePanel {
  private opener: HTMLElement | null = null;
  private readonly panel = byId("source-panel");

  constructor() {
    byId("close-source").addEventListener("click", () => this.close());
    document.addEventListener("keydown", e => { if (e.key === "Escape" && !this.panel.hidden) this.close(); });
  }

  show(citation: Citation, sources: Source[], opener: HTMLElement): void {
    this.opener?.setAttribute("aria-pressed", "false");
    this.opener = opener;
    opener.setAttribute("aria-pressed", "true");
    const source = sources.find(s => s.number === citation.number);
    const [before, cited, after] = source
      ? splitAtByteSpan(source.text, source.start, citation.start, citation.end)
      : ["", citation.text, ""];
    const mark = h("mark", { id: "cited-span" }, cited);
    const page = citation.page ?? 0;
    const isPdf = /\.pdf$/i.test(citation.document);
    byId("source-body").replaceChildren();
    byId("source-heading").textContent = `Source [${citation.number}]`;
    append(byId("source-body"),
      h("h3", { class: "source-title" }, citation.title || citation.document),
      h("p", { class: "source-meta" },
        page ? h("span", { class: "page-badge", "data-page": page }, `Page ${page}`) : null, page ? " " : null,
        citation.document,
        source?.heading_path?.length ? h("span", {}, ` · ${source.heading_path.join(" › ")}`) : null),
      isPdf && page ? h("p", { class: "hint" }, `In the PDF, open page ${page}.`) : null,
      h("div", { class: "source-text", tabindex: 0, "aria-label": "The source's text, the cited span highlighted" }, before, mark, after),
      sources.length > 1 ? h("div", { class: "other-sources" }, h("strong", {}, "All sources of this answer"),
        h("ol", {}, ...sources.map(s => h("li", { value: s.number },
          `${s.title || s.document}${s.page_first ? `, page ${s.page_first}` : ""} (relevance ${s.relevance.toFixed(2)})`)))) : null);
    this.panel.hidden = false;
    this.panel.parentElement?.classList.add("with-source");
    mark.scrollIntoView({ block: "center" });
    this.panel.focus();
  }

  close(): void {
    this.panel.hidden = true;
    this.panel.parentElement?.classList.remove("with-source");
    this.opener?.setAttribute("aria-pressed", "false");
    this.opener?.focus();
    this.opener = null;
  }
}
