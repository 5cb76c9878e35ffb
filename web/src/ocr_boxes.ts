// OCR'd lines drawn over the page or image they were read from: a box per line, placed in fractions
// of the page (the server's citation boxes), so it sits right at any scale.

import { type Box } from "./api";
import { h } from "./dom";

export function boxOverlay(box: Box): HTMLElement {
  const div = h("div", { class: "ocr-box", "data-page": box.page });
  div.style.left = `${box.left * 100}%`;
  div.style.top = `${box.top * 100}%`;
  div.style.width = `${(box.right - box.left) * 100}%`;
  div.style.height = `${(box.bottom - box.top) * 100}%`;
  return div;
}
