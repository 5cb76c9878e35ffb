// Answers rendered as Markdown (lists, code, tables, emphasis), sanitised: marked turns the text into
// HTML, DOMPurify keeps only the tags and attributes a formatted answer needs, so no HTML from a model
// or a document reaches the page. Citation markers become placeholders before parsing and buttons after.

import DOMPurify from "dompurify";
import { Marked } from "marked";
import { splitAtMarkers, type Marker } from "./text_spans";

// Raw HTML in the Markdown is shown as the text it is, not parsed (DOMPurify is the second wall).
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`);
const marked = new Marked({ gfm: true, breaks: true, async: false, renderer: { html: token => escapeHtml(token.text) } });
const purify = DOMPurify(window);
purify.addHook("afterSanitizeAttributes", node => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});
const sanitize = {
  ALLOWED_TAGS: ["p", "br", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li", "table", "thead",
    "tbody", "tr", "th", "td", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "a"],
  ALLOWED_ATTR: ["href", "title", "start"],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,  // no javascript:, data: or relative links
  RETURN_DOM_FRAGMENT: true as const,
};

// Private-use characters no answer holds: a marker's number between them survives Markdown.
const open = "\uE000", close = "\uE001";
const placeholder = new RegExp(`${open}(\\d+)${close}`, "g");

// The answer as sanitised Markdown; each marker [answer_start, answer_end) becomes button(index).
export function renderMarkdown(text: string, markers: Marker[], button: (index: number) => Node): DocumentFragment {
  const marked_ = splitAtMarkers(text, markers).map(p => (typeof p === "string" ? p : `${open}${p.number}${close}`)).join("");
  const fragment = purify.sanitize(marked.parse(marked_) as string, sanitize);
  const walker = document.createTreeWalker(fragment, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (n.nodeValue?.includes(open)) texts.push(n as Text);
  for (const node of texts) {
    const parts = node.nodeValue!.split(placeholder);  // text, number, text, number, ..., text
    node.replaceWith(...parts.map((part, i) => (i % 2 ? button(Number(part)) : document.createTextNode(part))));
  }
  return fragment;
}
