// The server gives spans as UTF-8 byte offsets of a document's text; the page works in UTF-16 strings.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// Splits `text` (which starts at byte `textStart` of its document) into the parts before, inside and
// after the document's bytes [start, end), clamped to the text.
export function splitAtByteSpan(text: string, textStart: number, start: number, end: number): [string, string, string] {
  const bytes = encoder.encode(text);
  const from = Math.max(0, Math.min(bytes.length, start - textStart));
  const to = Math.max(from, Math.min(bytes.length, end - textStart));
  return [decoder.decode(bytes.subarray(0, from)), decoder.decode(bytes.subarray(from, to)), decoder.decode(bytes.subarray(to))];
}

// The answer's text split at its citation markers: byte spans [answer_start, answer_end) of `text`.
export interface Marker { start: number; end: number; number: number }

export function splitAtMarkers(text: string, markers: Marker[]): (string | Marker)[] {
  const bytes = encoder.encode(text);
  const parts: (string | Marker)[] = [];
  let at = 0;
  for (const m of [...markers].sort((a, b) => a.start - b.start)) {
    if (m.start < at || m.end > bytes.length) continue;
    if (m.start > at) parts.push(decoder.decode(bytes.subarray(at, m.start)));
    parts.push(m);
    at = m.end;
  }
  if (at < bytes.length) parts.push(decoder.decode(bytes.subarray(at)));
  return parts;
}
