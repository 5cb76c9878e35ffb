// The left column: collections (create, pick, delete), the picked collection's documents, and uploads
// with per-file progress read from the jobs API. What it offers follows the caller's role over the
// picked collection: a reader gets no upload zone and no delete buttons, an editor uploads and removes
// documents, an owner (or admin) also shares, renames and deletes it (the server decides either way).

import { Api, atLeast, type Collection, type Job, type JobFile, type Role } from "./api";
import { byId, formatBytes, h } from "./dom";
import { remember } from "./settings";

const finished = new Set(["succeeded", "partial", "failed", "cancelled"]);
const mayDo: Record<Role, string> = {
  reader: "You are a reader here: search and ask.",
  editor: "You are an editor here: add and remove documents.",
  owner: "You own this collection.",
  admin: "You are an admin of this tenant.",
};

export class Library {
  current: string | null = remember.get("collection");
  private collections: Collection[] = [];

  constructor(private readonly api: Api, private readonly report: (error: unknown) => void,
              private readonly onSelect: (name: string | null) => void) {
    byId<HTMLFormElement>("create-collection").addEventListener("submit", e => { e.preventDefault(); void this.create(); });
    byId("delete-collection").addEventListener("click", () => void this.deleteCurrent());
    byId("share-collection").addEventListener("click", () => void this.administer("share"));
    byId("rename-collection").addEventListener("click", () => void this.administer("rename"));
    const input = byId<HTMLInputElement>("file-input");
    input.addEventListener("change", () => { void this.upload([...(input.files ?? [])]); input.value = ""; });
    const zone = byId("drop-zone");
    zone.addEventListener("dragover", e => { e.preventDefault(); zone.classList.add("over"); });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", e => {
      e.preventDefault();
      zone.classList.remove("over");
      void this.upload([...(e.dataTransfer?.files ?? [])]);
    });
  }

  async refresh(): Promise<void> {
    try {
      this.collections = (await this.api.collections()).data;
    } catch (e) {
      this.report(e);
      return;
    }
    if (this.current && !this.collections.some(c => c.name === this.current)) this.current = null;
    if (!this.current && this.collections.length) this.current = this.collections[0]!.name;
    this.render();
  }

  // The caller's role over the picked collection (undefined from a server that does not say).
  get role(): Role | undefined { return this.collections.find(c => c.name === this.current)?.role; }

  select(name: string | null): void {
    this.current = name;
    remember.set("collection", name);
    this.render();
  }

  private render(): void {
    const list = byId("collections");
    list.replaceChildren(...this.collections.map(c => h("li", {},
      h("button", { type: "button", "aria-current": c.name === this.current ? "true" : "false", onclick: () => this.select(c.name) },
        h("span", {}, c.name), h("span", { class: "count" }, `${c.documents} docs · ${c.chunks} chunks`)))));
    if (!this.collections.length) list.replaceChildren(h("li", { class: "empty" }, "No collections yet: create one below."));
    byId("documents-section").hidden = !this.current;
    const role = this.role;
    byId("drop-zone").hidden = !atLeast(role, "editor");
    byId("collection-actions").hidden = !atLeast(role, "owner");
    byId("collection-role").textContent = role ? mayDo[role] : "";
    remember.set("collection", this.current);
    this.onSelect(this.current);
    if (this.current) void this.refreshDocuments();
  }

  async refreshDocuments(): Promise<void> {
    const name = this.current;
    if (!name) return;
    const body = byId("documents");
    try {
      const documents = (await this.api.documents(name)).data;
      if (name !== this.current) return;
      body.replaceChildren(...documents.map(d => h("tr", {},
        h("td", { class: "name", title: d.path }, d.title || d.path),
        h("td", {}, formatBytes(d.size_bytes)),
        h("td", {}, d.chunks),
        h("td", {}, "indexed"),
        h("td", {}, atLeast(this.role, "editor") && h("button", { type: "button", "aria-label": `Remove ${d.title || d.path}`,
          title: "Remove from the collection", onclick: () => void this.removeDocument(d.id, d.title || d.path) }, "×")))));
      if (!documents.length) body.replaceChildren(h("tr", {}, h("td", { colspan: 5, class: "empty" }, "No documents yet.")));
    } catch (e) {
      this.report(e);
    }
  }

  private async create(): Promise<void> {
    const input = byId<HTMLInputElement>("new-collection");
    const name = input.value.trim();
    if (!name) return;
    try {
      await this.api.createCollection(name, byId<HTMLSelectElement>("new-embedder").value);
      input.value = "";
      this.current = name;
      await this.refresh();
    } catch (e) {
      this.report(e);
    }
  }

  private async deleteCurrent(): Promise<void> {
    const name = this.current;
    if (!name || !confirm(`Delete the collection "${name}" and everything indexed in it?`)) return;
    try {
      await this.api.deleteCollection(name);
      this.current = null;
      await this.refresh();
    } catch (e) {
      this.report(e);
    }
  }

  // Share and Rename load with their dialogs, the first time one is used.
  private async administer(what: "share" | "rename"): Promise<void> {
    const name = this.current;
    if (!name) return;
    try {
      const admin = await import("./collection_admin");
      if (what === "share") admin.share(this.api, name, () => void this.refresh());
      else admin.rename(this.api, name, to => void this.renamed(name, to));
    } catch (e) {
      this.report(e);
    }
  }

  // After a rename: the new name is picked, and keeps the conversation this browser had open in it.
  private async renamed(from: string, to: string): Promise<void> {
    remember.set(`conversation.${to}`, remember.get(`conversation.${from}`));
    remember.set(`conversation.${from}`, null);
    if (this.current === from) this.current = to;
    await this.refresh();
  }

  private async removeDocument(id: number, title: string): Promise<void> {
    if (!this.current || !confirm(`Remove "${title}" from the collection?`)) return;
    try {
      await this.api.deleteDocument(this.current, id);
      await this.refreshDocuments();
      await this.refresh();
    } catch (e) {
      this.report(e);
    }
  }

  async upload(files: File[]): Promise<void> {
    const collection = this.current;
    if (!collection || !files.length) return;
    const item = h("li", {}, `Uploading ${files.length} file${files.length > 1 ? "s" : ""}…`);
    byId("uploads").prepend(item);
    let job: Job;
    try {
      job = await this.api.upload(collection, files);
    } catch (e) {
      item.replaceChildren(h("span", { class: "error" }, `Upload failed: ${e instanceof Error ? e.message : String(e)}`));
      this.report(e);
      return;
    }
    // Per-file progress comes from the job until it finishes.
    for (;;) {
      renderJob(item, job);
      if (finished.has(job.state)) break;
      await new Promise(resolve => setTimeout(resolve, 400));
      try {
        job = await this.api.job(job.id);
      } catch (e) {
        this.report(e);
        break;
      }
    }
    if (collection === this.current) await this.refresh();
  }
}

// What a file's row says: its status, and while a scan's pages are OCR'd, which page ("OCR page 2 of
// 5": the next one being read; once every page is read the text is chunked and embedded: "indexing").
function fileState(f: JobFile): string {
  if (f.status === "indexed") return `indexed, ${f.chunks} chunks`;
  const pages = f.ocr_pages ?? 0, read = f.ocr_pages_done ?? 0;
  if (f.status === "indexing" && pages > 0 && read < pages) return `OCR page ${read + 1} of ${pages}`;
  return f.status;
}

function renderJob(item: HTMLElement, job: Job): void {
  item.replaceChildren(...job.files.map(f => {
    const done = f.status === "indexed" || f.status === "unchanged";
    const state = fileState(f);
    const bar = h("progress", { max: 1, "aria-label": `${f.name}: ${state}` });
    const pages = f.ocr_pages ?? 0;
    if (f.status === "indexing" && pages > 0 && (f.ocr_pages_done ?? 0) < pages) {
      bar.max = pages;
      bar.value = f.ocr_pages_done ?? 0;
    } else if (f.status !== "indexing") {
      bar.value = f.status === "queued" ? 0 : 1;  // indexing without pages to OCR: no value, indeterminate
    }
    return h("div", { class: "upload-file", "data-status": f.status },
      h("div", { class: "row" }, h("strong", {}, f.name),
        h("span", { class: f.status === "failed" ? "error" : done ? "done" : "" }, state)),
      bar,
      f.error ? h("div", { class: "file-error" }, f.error) : null);
  }));
}
