// Finding a cited span in text laid out differently: PDF.js yields a page as text items whose spacing,
// line breaks, ligatures, dashes and quotes need not be the server's (poppler's). Both sides are folded
// the same way (no whitespace, NFKC, one dash, one kind of quote) before searching.

export interface ItemRange { item: number; from: number; to: number }  // UTF-16 offsets in one item

function fold(ch: string): string {
  if (/\s|\u00ad/.test(ch)) return "";  // whitespace and soft hyphens
  return ch.normalize("NFKC").replace(/[\u2010-\u2015\u2212]/g, "-").replace(/[\u2018\u2019\u201b\u2032]/g, "'")
    .replace(/[\u201c\u201d\u201f\u2033]/g, '"').toLowerCase();
}

function folded(text: string): string {
  let out = "";
  for (const ch of text) out += fold(ch);
  return out;
}

// Where `wanted` lies in `items`, as ranges of the items' own text; null when it is not there. A span
// not found whole is looked for by its longest prefix of at least 24 folded characters.
export function findInItems(items: string[], wanted: string): ItemRange[] | null {
  let haystack = "";
  const origin: { item: number; at: number; length: number }[] = [];  // per folded character
  items.forEach((text, item) => {
    let at = 0;
    for (const ch of text) {
      for (const f of fold(ch)) {
        haystack += f;
        origin.push({ item, at, length: ch.length });
      }
      at += ch.length;
    }
  });
  let needle = folded(wanted);
  let start = needle ? haystack.indexOf(needle) : -1;
  for (let length = needle.length; start < 0 && length >= 24; length = Math.floor(length * 0.75)) {
    start = haystack.indexOf(needle.slice(0, length));
    if (start >= 0) needle = needle.slice(0, length);
  }
  if (start < 0) return null;
  const ranges: ItemRange[] = [];
  for (let i = start; i < start + needle.length; ++i) {
    const o = origin[i]!;
    const last = ranges[ranges.length - 1];
    if (last && last.item === o.item) last.to = Math.max(last.to, o.at + o.length);
    else ranges.push({ item: o.item, from: o.at, to: o.at + o.length });
  }
  return ranges;
}
