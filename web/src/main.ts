// Kotae's web page: wires the library (collections, documents, uploads), the chat and the source
// panel to the API, keeps the settings, and tells the user plainly when something fails.

import { Api, ApiError, type Backend } from "./api";
import { byId, h } from "./dom";
import { Chat } from "./chat";
import { Library } from "./library";
import { loadSettings, saveSettings, type Settings } from "./settings";
import { SourcePanel } from "./source_panel";

let settings: Settings = loadSettings();
const api = new Api(() => settings.api_key);

function report(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof ApiError && error.code === "invalid_api_key" ? " Set the API key in Settings." : "";
  byId("alert-text").textContent = message + hint;
  byId("alert").hidden = false;
  if (error instanceof ApiError && error.code === "unreachable") setServerState("Server unreachable", "down");
}
byId("alert-close").addEventListener("click", () => { byId("alert").hidden = true; });

function setServerState(text: string, state: "ok" | "down" | "") {
  const element = byId("server-state");
  element.textContent = text;
  element.className = `server-state ${state}`;
}

const panel = new SourcePanel();
const chat = new Chat(api, () => settings, panel, report);
const library = new Library(api, report, name => chat.open(name));

// Narrow screens show the library on demand.
const toggle = byId("toggle-library");
toggle.addEventListener("click", () => {
  const open = byId("library").classList.toggle("open");
  toggle.setAttribute("aria-expanded", String(open));
});

// Settings: a native <dialog>, so focus handling and Escape come with it.
const dialog = byId<HTMLDialogElement>("settings");
const field = <T extends HTMLInputElement | HTMLSelectElement>(id: string) => byId<T>(id);
let backends: Backend[] = [];

function fillSettings(): void {
  field<HTMLSelectElement>("set-mode").value = settings.mode;
  field<HTMLInputElement>("set-k").value = String(settings.k);
  field<HTMLInputElement>("set-rerank").checked = settings.rerank;
  const select = field<HTMLSelectElement>("set-backend");
  select.replaceChildren(h("option", { value: "" }, "Server's default order"),
    ...backends.map(b => h("option", { value: backendName(b.name), disabled: !b.available },
      b.available ? b.name : `${b.name} (unavailable: ${b.reason})`)));
  select.value = settings.backend;
  field<HTMLInputElement>("set-max-tokens").value = String(settings.max_tokens);
  field<HTMLInputElement>("set-temperature").value = String(settings.temperature);
  field<HTMLInputElement>("set-api-key").value = settings.api_key;
}

// /readyz names the llama.cpp back-end as the library; requests name it "llama".
const backendName = (name: string) => (name === "llama.cpp" ? "llama" : name);

byId("open-settings").addEventListener("click", () => { fillSettings(); dialog.showModal(); });
dialog.addEventListener("close", () => {
  if (dialog.returnValue !== "save") return;
  const keyChanged = field<HTMLInputElement>("set-api-key").value !== settings.api_key;
  settings = {
    mode: field<HTMLSelectElement>("set-mode").value as Settings["mode"],
    k: Number(field<HTMLInputElement>("set-k").value) || 5,
    rerank: field<HTMLInputElement>("set-rerank").checked,
    backend: field<HTMLSelectElement>("set-backend").value,
    max_tokens: Number(field<HTMLInputElement>("set-max-tokens").value) || 512,
    temperature: Number(field<HTMLInputElement>("set-temperature").value),
    api_key: field<HTMLInputElement>("set-api-key").value.trim(),
  };
  saveSettings(settings);
  if (keyChanged) void library.refresh();
});

// The server answers /healthz at once and /readyz once its models are warm; the page waits for that.
async function watchServer(): Promise<void> {
  for (let wasDown = false; ;) {
    try {
      const ready = await api.ready();
      if (ready.status === "ready") {
        backends = ready.backends ?? [];
        const embedder = ready.embedders?.[0];
        const provider = embedder?.provider.replace(/ExecutionProvider$/, "");  // "CPUExecutionProvider" -> "CPU"
        setServerState(embedder ? `Ready · ${embedder.model} on ${provider}` : "Ready", "ok");
        if (wasDown) byId("alert").hidden = true;
        return;
      }
      setServerState("Loading models…", "");
    } catch {
      wasDown = true;
      setServerState("Server unreachable", "down");
    }
    await new Promise(resolve => setTimeout(resolve, wasDown ? 3000 : 500));
  }
}

void watchServer().then(() => library.refresh());
