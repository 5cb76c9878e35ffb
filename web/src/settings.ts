// What the user chose in the settings dialog, kept in this browser's localStorage.

export interface Settings {
  mode: "hybrid" | "vector" | "bm25";
  k: number;
  rerank: boolean;
  backend: string;  // "" lets the server use its configured order
  max_tokens: number;
  temperature: number;
  api_key: string;
}

const key = "kotae.settings";
export const defaults: Settings = { mode: "hybrid", k: 5, rerank: false, backend: "", max_tokens: 512, temperature: 0.2, api_key: "" };

export function loadSettings(): Settings {
  try {
    const stored = JSON.parse(localStorage.getItem(key) ?? "{}") as Partial<Settings>;
    return { ...defaults, ...stored };
  } catch {
    return { ...defaults };
  }
}

export function saveSettings(settings: Settings): void {
  localStorage.setItem(key, JSON.stringify(settings));
}

// Small per-browser memories: the collection last used and each collection's conversation.
export const remember = {
  get(name: string): string | null { try { return localStorage.getItem(`kotae.${name}`); } catch { return null; } },
  set(name: string, value: string | null): void {
    try { if (value === null) localStorage.removeItem(`kotae.${name}`); else localStorage.setItem(`kotae.${name}`, value); } catch { /* private mode */ }
  },
};
