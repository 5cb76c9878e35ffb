// Where in its document a source or citation is, as people read it: ", page 3", ", slides 2-3", then
// a table's rows: ", sheet Prices, rows 2-9", ", Table 1, row 4". The same words as the CLI's
// (rag/source.h place_of).

export interface Place {
  format: string;
  page: number; page_last: number;  // 0: no pages
  table?: string; row_first?: number; row_last?: number;
}

export function placeOf(p: Place): string {
  let place = "";
  if (p.page) {
    const unit = p.format === "pptx" ? "slide" : "page";
    place = p.page_last > p.page ? `, ${unit}s ${p.page}-${p.page_last}` : `, ${unit} ${p.page}`;
  }
  if (p.table) {
    place += p.format === "xlsx" || p.format === "ods" ? `, sheet ${p.table}` : `, ${p.table}`;
    const first = p.row_first ?? 0, last = p.row_last ?? 0;
    place += last > first ? `, rows ${first}-${last}` : `, row ${first}`;
  }
  return place;
}
