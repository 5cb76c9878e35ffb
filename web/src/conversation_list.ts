// The picked collection's saved conversations (kept by the server, newest first): each opens, renames
// in place, or is deleted.

import { Api, type ConversationSummary } from "./api";
import { byId, h } from "./dom";

const when = (seconds: number) =>
  new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });

export class ConversationList {
  private collection: string | null = null;
  private current = "";
  private readonly list = byId("conversations");

  constructor(private readonly api: Api, private readonly report: (error: unknown) => void,
              private readonly onOpen: (id: string) => void, private readonly onDeleted: (id: string) => void) {}

  async refresh(collection: string | null, current: string): Promise<void> {
    this.collection = collection;
    this.current = current;
    byId("conversations-section").hidden = !collection;
    if (!collection) return;
    let listed: ConversationSummary[];
    try {
      listed = (await this.api.conversations(collection)).data;
    } catch (e) {
      this.report(e);
      return;
    }
    if (collection !== this.collection) return;
    this.list.replaceChildren(...listed.map(c => this.item(c)));
    if (!listed.length) this.list.replaceChildren(h("li", { class: "empty" }, "None yet: ask a question."));
  }

  private item(c: ConversationSummary): HTMLLIElement {
    const title = c.title || "Untitled";
    const item = h("li", { "data-id": c.id },
      h("button", { type: "button", class: "open", "aria-current": c.id === this.current ? "true" : "false", onclick: () => this.onOpen(c.id) },
        h("span", { class: "title" }, title), h("span", { class: "when" }, `${when(c.updated_at)} · ${c.turns} turn${c.turns === 1 ? "" : "s"}`)),
      h("button", { type: "button", "aria-label": `Rename "${title}"`, title: "Rename", onclick: () => this.rename(item, c) }, "✎"),
      h("button", { type: "button", "aria-label": `Delete "${title}"`, title: "Delete", onclick: () => void this.remove(c) }, "×"));
    return item;
  }

  private rename(item: HTMLLIElement, c: ConversationSummary): void {
    const input = h("input", { value: c.title, "aria-label": "New name", maxLength: 200, required: true });
    const form = h("form", { class: "row" }, input, h("button", { type: "submit" }, "Save"));
    form.addEventListener("submit", async e => {
      e.preventDefault();
      try {
        await this.api.renameConversation(c.id, input.value.trim());
      } catch (error) {
        this.report(error);
      }
      await this.refresh(this.collection, this.current);
    });
    input.addEventListener("keydown", e => { if (e.key === "Escape") { e.stopPropagation(); void this.refresh(this.collection, this.current); } });
    item.replaceChildren(form);
    input.focus();
    input.select();
  }

  private async remove(c: ConversationSummary): Promise<void> {
    if (!confirm(`Delete the conversation "${c.title}"?`)) return;
    try {
      await this.api.deleteConversation(c.id);
      this.onDeleted(c.id);
    } catch (e) {
      this.report(e);
    }
    await this.refresh(this.collection, this.current);
  }
}
