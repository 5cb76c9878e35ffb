// An owner's tools for the picked collection, loaded the first time one is used: Share (its members
// and their roles: add one, change a role, remove one) and Rename. Each is a native <dialog> (focus,
// Escape and Tab come with it); a refusal shows the server's own message inside it ("must keep an
// owner", "already taken").

import type { Api, Collection, Member, MemberKind } from "./api";
import { h } from "./dom";

// Their routes (docs/auth.md), here rather than in api.ts: the page loads them only when used.
const path = (...parts: string[]) => `/v1/collections/${parts.map(encodeURIComponent).join("/")}`;
const members = (api: Api, c: string) => api.json<{ data: Member[] }>("GET", path(c, "members"));
const putMember = (api: Api, c: string, m: { kind: MemberKind; id: string; role: string }) => api.json<Member>("PUT", path(c, "members"), m);
const removeMember = (api: Api, c: string, m: Member) => api.json("DELETE", path(c, "members", m.kind, m.id));
const renameCollection = (api: Api, c: string, name: string) => api.json<Collection>("PATCH", path(c), { name });

const kinds: [MemberKind, string][] = [
  ["user", "User (their id at the provider)"], ["group", "Group"], ["key", "API key (its name)"], ["tenant", "Everyone in the tenant"]];
const grantable = ["reader", "editor", "owner"];

function roleSelect(props: Record<string, unknown>, value: string): HTMLSelectElement {
  const select = h("select", props, ...grantable.map(r => h("option", { value: r }, r)));
  select.value = value;
  return select;
}

// A modal dialog added to the page for as long as it is open, with a place for the server's refusals.
function modal(id: string, title: string, onClose: () => void) {
  const error = h("p", { class: "dialog-error", role: "alert", hidden: true });
  const dialog = h("dialog", { id, "aria-labelledby": `${id}-heading` }, h("h2", { id: `${id}-heading` }, title), error);
  dialog.addEventListener("close", () => { dialog.remove(); onClose(); });
  const show = (e: unknown) => { error.textContent = e instanceof Error ? e.message : String(e); error.hidden = false; };
  return { dialog, error, show, open: () => { document.body.append(dialog); dialog.showModal(); } };
}

const who = (m: Pick<Member, "kind" | "id">) => (m.kind === "tenant" ? "everyone in the tenant" : `${m.kind} ${m.id}`);

export function share(api: Api, collection: string, onClose: () => void): void {
  const { dialog, error, show, open } = modal("share", `Share “${collection}”`, onClose);
  const rows = h("tbody", { id: "share-members" });
  const kind = h("select", { id: "share-kind" }, ...kinds.map(([value, text]) => h("option", { value }, text)));
  const id = h("input", { id: "share-id", required: true, autocomplete: "off", maxLength: 256 });
  const role = roleSelect({ id: "share-role" }, "reader");
  kind.addEventListener("change", () => {
    const everyone = kind.value === "tenant";
    id.value = everyone ? "*" : "";
    id.disabled = everyone;
  });
  const add = h("form", { class: "share-add" }, h("fieldset", {}, h("legend", {}, "Add someone"),
    h("label", { for: "share-kind" }, "Who"), kind, h("label", { for: "share-id" }, "Their id"), id,
    h("label", { for: "share-role" }, "Role"), role, h("div", { class: "row end" }, h("button", { type: "submit", class: "primary" }, "Add"))));

  // Lists the members again, keeping the focus on the row (or control) it was on.
  async function load(): Promise<void> {
    const focused = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const row = focused?.closest("tr")?.dataset.member;
    let listed: Member[];
    try {
      listed = (await members(api, collection)).data;
    } catch (e) {
      return show(e);
    }
    rows.replaceChildren(...listed.map(member));
    if (!listed.length)
      rows.replaceChildren(h("tr", {}, h("td", { colspan: 3, class: "empty" }, "No members: everyone in the tenant has their tenant role over it. Adding someone makes it theirs alone.")));
    if (row) {
      const again = [...rows.querySelectorAll<HTMLElement>("tr")].find(r => r.dataset.member === row);
      (again?.querySelector<HTMLElement>(focused instanceof HTMLSelectElement ? "select" : "button") ?? id).focus();
    }
  }
  async function change(request: () => Promise<unknown>): Promise<void> {
    error.hidden = true;
    try {
      await request();
    } catch (e) {
      show(e);
    }
    await load();  // a refused change puts the row back as the server has it
  }
  function member(m: Member): HTMLTableRowElement {
    const select = roleSelect({ "aria-label": `Role of ${who(m)}` }, m.role);
    select.addEventListener("change", () => void change(() => putMember(api, collection, { kind: m.kind, id: m.id, role: select.value })));
    return h("tr", { "data-member": `${m.kind}:${m.id}` },
      h("td", {}, m.kind === "tenant" ? "Everyone in the tenant" : m.id, " ", h("small", {}, m.kind)),
      h("td", {}, select),
      h("td", {}, h("button", { type: "button", "aria-label": `Remove ${who(m)}`, title: "Remove",
        onclick: () => void change(() => removeMember(api, collection, m)) }, "×")));
  }
  add.addEventListener("submit", e => {
    e.preventDefault();
    void change(async () => {
      await putMember(api, collection, { kind: kind.value as MemberKind, id: id.value.trim(), role: role.value });
      if (kind.value !== "tenant") id.value = "";
    });
  });

  dialog.append(h("p", { class: "hint" }, "Who may use it besides the tenant's admins: readers search and ask, editors also add and remove documents, owners also share, rename and delete it."),
    h("table", { class: "members" }, h("caption", { class: "visually-hidden" }, "Members"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Member"), h("th", { scope: "col" }, "Role"),
        h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")))), rows),
    add, h("div", { class: "row end" }, h("button", { type: "button", onclick: () => dialog.close() }, "Close")));
  open();
  void load();
}

export function rename(api: Api, collection: string, onRenamed: (name: string) => void): void {
  let renamed = "";
  const { dialog, error, show, open } = modal("rename", `Rename “${collection}”`, () => { if (renamed) onRenamed(renamed); });
  const input = h("input", { id: "rename-name", value: collection, required: true, autocomplete: "off",
    pattern: "[A-Za-z0-9][A-Za-z0-9._\\-]{0,63}", title: "Letters, digits, dot, dash and underscore" });
  const form = h("form", {}, h("label", { for: "rename-name" }, "New name"), input,
    h("div", { class: "row end" }, h("button", { type: "button", onclick: () => dialog.close() }, "Cancel"),
      h("button", { type: "submit", class: "primary" }, "Rename")));
  form.addEventListener("submit", async e => {
    e.preventDefault();
    const to = input.value.trim();
    if (to === collection) return dialog.close();
    error.hidden = true;
    try {
      renamed = (await renameCollection(api, collection, to)).name || to;
      dialog.close();
    } catch (err) {
      show(err);
      input.focus();
    }
  });
  dialog.append(form);
  open();
  input.select();
}
