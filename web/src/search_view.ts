// Search mode's results: each hit with its document, page and text, the query's words marked; a hit
// opens its document in the source panel like a citation.

import type { SearchHit } from "./api";
import { h } from "./dom";
import type { Span } from "./source_panel";

// The query's words (two letters or more), for marking; at most 16.
function words(query: string): string[] {
  return [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [])].slice(0, 16);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// `text` with every whole-word occurrence of `marked` wrapped in <mark>.
export function markWords(text: string, marked: string[]): (Node | string)[] {
  if (!marked.length) return [text];
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(${marked.map(escapeRegExp).join("|")})(?![\\p{L}\\p{N}])`, "giu");
  return text.split(pattern).map((part, i) => (i % 2 ? h("mark", { class: "word" }, part) : part));
}

export function showHits(item: HTMLElement, query: string, hits: SearchHit[], open: (span: Span, opener: HTMLElement) => void): void {
  if (!hits.length) {
    item.append(h("p", { class: "empty" }, "Nothing in the collection matches."));
    return;
  }
  const marked = words(query);
  item.append(h("ol", { class: "hits", "aria-label": `Search hits for ${query}` }, ...hits.map(hit => {
    const page = hit.page_first ? `page ${hit.page_first}${hit.page_last > hit.page_first ? `–${hit.page_last}` : ""}` : "";
    const button = h("button", { type: "button", class: "hit-open", "aria-pressed": "false" },
      `${hit.rank}. ${hit.title || hit.document}${page ? ` · ${page}` : ""}`);
    button.addEventListener("click", () => open({
      label: `Search hit ${hit.rank}`, document_id: hit.document_id, document: hit.document, title: hit.title, format: hit.format,
      page: hit.page_first, page_last: hit.page_last, start: hit.span[0], end: hit.span[1], text: hit.text,
      heading_path: hit.heading_path, chunk: { start: hit.span[0], text: hit.text },
    }, button));
    return h("li", { class: "hit", "data-document": hit.document },
      button,
      h("p", { class: "source-meta" }, hit.document, hit.heading_path.length ? ` · ${hit.heading_path.join(" › ")}` : ""),
      h("p", { class: "snippet" }, ...markWords(hit.text.length > 600 ? `${hit.text.slice(0, 600)}…` : hit.text, marked)));
  })));
}
