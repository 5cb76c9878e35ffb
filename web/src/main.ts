// Kotae's web page: wires the library (collections, documents, uploads), the saved conversations, the
// chat and the source panel to the API, keeps the settings, and tells the user plainly when something
// fails. What can be chosen (embedders, back-ends and their models, the reranker) is what the server
// reports.

import { Api, ApiError, type Backend, type Model } from "./api";
import { byId, h } from "./dom";
import { Chat } from "./chat";
import { ConversationList } from "./conversation_list";
import { Library } from "./library";
import { loadSettings, saveSettings, type Settings } from "./settings";
import { SourcePanel } from "./source_panel";

let settings: Settings = loadSettings();
const api = new Api(() => settings.api_key);

function report(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof ApiError && error.code === "invalid_api_key"
    ? (byId("sign-in").hidden ? " Set the API key in Settings." : " Sign in, or set an API key in Settings.") : "";
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

const panel = new SourcePanel(api, () => library.current);
const conversations = new ConversationList(api, report, id => void chat.resume(id), id => { if (chat.conversation === id) chat.reset(); });
const chat = new Chat(api, () => settings, panel, report, id => void conversations.refresh(library.current, id));
const library = new Library(api, report, name => { chat.open(name); void conversations.refresh(name, chat.conversation); });

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
let models: Model[] = [];

function fillSettings(): void {
  field<HTMLSelectElement>("set-mode").value = settings.mode;
  field<HTMLInputElement>("set-k").value = String(settings.k);
  field<HTMLInputElement>("set-rerank").checked = settings.rerank;
  const select = field<HTMLSelectElement>("set-backend");
  select.replaceChildren(h("option", { value: "" }, "Server's default order"),
    ...backends.map(b => h("option", { value: backendName(b.name), disabled: !b.available },
      b.available ? `${b.name}${generatorOf(b.name)}` : `${b.name} (unavailable: ${b.reason})`)));
  const reranker = models.find(m => m.kind === "rerank" && !m.alias_of);
  byId("rerank-model").textContent = reranker ? reranker.id : "the cross-encoder (none loaded)";
  field<HTMLInputElement>("set-rerank").disabled = !reranker;
  select.value = settings.backend;
  field<HTMLInputElement>("set-max-tokens").value = String(settings.max_tokens);
  field<HTMLInputElement>("set-temperature").value = String(settings.temperature);
  field<HTMLInputElement>("set-api-key").value = settings.api_key;
}

// /readyz names the llama.cpp back-end as the library; requests name it "llama".
const backendName = (name: string) => (name === "llama.cpp" ? "llama" : name);
// A generator's model id starts with its back-end's name ("llama.cpp:…", "openai:…").
const generatorOf = (backend: string) => {
  const model = models.find(m => m.kind === "chat" && !m.alias_of && m.id.startsWith(`${backend}:`));
  return model ? ` · ${model.id.slice(backend.length + 1)}` : "";
};

// The installed embedders, for a new collection.
async function loadModels(): Promise<void> {
  try {
    models = (await api.models()).data;
  } catch (e) {
    report(e);
    return;
  }
  byId("new-embedder").replaceChildren(h("option", { value: "" }, "Server's default"),
    ...models.filter(m => m.kind === "embedding" && !m.alias_of).map(m => h("option", { value: m.id }, m.id)));
}
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
  if (keyChanged) void Promise.all([library.refresh(), loadModels()]);
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

// Who is here: a person signed in with the company's provider (their name, tenant and "Sign out"), a
// pasted key, or nobody yet: "Sign in" when the server offers it (a key can still be pasted), or
// straight to the provider when the server says so (--oidc-auto-sign-in), once per tab: a page that
// comes back still without a session (the provider refused, the callback failed) or after "Sign out"
// offers the button instead of going round again.
const autoTried = "kotae.auto_sign_in";
const tab = {
  get: () => { try { return sessionStorage.getItem(autoTried) !== null; } catch { return true; } },
  set: (tried: boolean) => { try { if (tried) sessionStorage.setItem(autoTried, "1"); else sessionStorage.removeItem(autoTried); } catch { /* no storage: no auto sign-in */ } },
};
const signIn = () => location.assign(`/auth/login?return_to=${encodeURIComponent(location.pathname + location.search)}`);

async function identify(): Promise<void> {
  try {
    const me = await api.me();
    api.csrf = me.csrf_token ?? "";
    byId("create-collection").hidden = me.role === "reader";  // creating one needs the tenant's editor
    if (me.via === "session") {
      tab.set(false);
      byId("who").replaceChildren(h("span", {}, me.name), " ", h("small", {}, `${me.tenant} · ${me.role}`));
      byId("who").hidden = false;
      byId("sign-out").hidden = false;
    }
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "invalid_api_key")) return;
    const config = await api.signInConfig();
    if (config.auto_sign_in && !settings.api_key && !tab.get() && !new URLSearchParams(location.search).has("error")) {
      tab.set(true);
      return signIn();
    }
    byId("sign-in").hidden = !config.sign_in;
  }
}
byId("sign-in").addEventListener("click", signIn);
byId("sign-out").addEventListener("click", () => {
  tab.set(true);  // back from the provider's sign-out, the page offers "Sign in" rather than signing in again
  api.signOut().then(out => location.assign(out.end_session_url || "/"), report);
});

void identify();
void watchServer().then(() => Promise.all([library.refresh(), loadModels()]));
