// The Kotae HTTP API as the page uses it. Every failure becomes an ApiError with the server's stable
// code and message, or code "unreachable" when no answer came back at all.

import { readEvents, type ServerEvent } from "./sse";

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) { super(message); }
}

// The caller's role over a collection, in rising order: a reader searches and asks, an editor also
// uploads and deletes documents, an owner also shares, renames and deletes it; a tenant admin all of it.
export type Role = "reader" | "editor" | "owner" | "admin";
export const roles: readonly Role[] = ["reader", "editor", "owner", "admin"];
export const atLeast = (role: Role | undefined, needed: Role) => roles.indexOf(role ?? "admin") >= roles.indexOf(needed);
export interface Collection {
  name: string; documents: number; chunks: number; size_bytes: number; embedder: string;
  role?: Role;  // the caller's (a server before roles says nothing: the server still decides)
}
// Who may use a collection: a user (the provider's id), a group, an API key (by name) or the whole tenant ("*").
export type MemberKind = "user" | "group" | "key" | "tenant";
export interface Member { kind: MemberKind; id: string; role: Exclude<Role, "admin">; added_at: number; added_by: string }
export interface DocumentInfo { id: number; path: string; title: string; format: string; size_bytes: number; chunks: number }
export interface JobFile {
  name: string; status: string; chunks: number; bytes: number; error?: string;
  ocr_pages?: number; ocr_pages_done?: number;  // only for a file with pages to OCR
}
export interface Job {
  id: string; collection: string; state: string; files: JobFile[];
  progress: { files_done: number; files_total: number; chunks: number; bytes_done: number; bytes_total: number };
}
export interface Source {
  number: number; chunk_id: number; document_id: number; document: string; title: string; format: string;
  page_first: number; page_last: number; start: number; end: number; relevance: number; score: number;
  heading_path: string[]; text: string;
  table?: string; row_first?: number; row_last?: number;  // a piece of a table: which one, which rows
}
// Where an OCR'd line is on its page: fractions of the page's width and height from its top-left corner.
export interface Box { page: number; left: number; top: number; right: number; bottom: number }
export interface Citation {
  number: number; chunk_id: number; document_id: number; document: string; title: string; format: string;
  page: number | null; page_last: number | null; start: number; end: number; text: string;
  answer_start: number; answer_end: number;
  table_header?: string;  // a cited table row's header lines
  boxes?: Box[];  // of OCR'd text: the lines the cited bytes are on
}
export interface SearchHit {
  rank: number; score: number; chunk_id: number; document_id: number; document: string; title: string; format: string;
  page_first: number; page_last: number; heading_path: string[]; span: [number, number]; text: string;
}
export interface ConversationSummary { id: string; collection: string; title: string; created_at: number; updated_at: number; turns: number }
export interface StoredTurn { question: string; answer: string; sources: Source[]; citations: Citation[]; created_at: number }
export interface Conversation extends Omit<ConversationSummary, "turns"> { turns: StoredTurn[] }
export interface Model { id: string; kind: string; alias_of?: string }
export type Timings = Record<string, number>;
export interface Answer {
  answer: string; backend: string; citations: Citation[]; sources: Source[]; timings_ms: Timings;
  conversation_id: string; cache?: string; fallbacks: { backend: string; error: string }[];
}
export interface Backend { name: string; available: boolean; reason: string }
export interface Ready { status: string; embedders?: { model: string; provider: string }[]; backends?: Backend[] }

const unreachable = () => new ApiError(0, "unreachable", `Cannot reach the Kotae server at ${location.origin}. Is it running?`);

// Who the caller is (GET /v1/me): a pasted API key, or a person signed in with the company's provider.
export interface Me {
  actor: string; name: string; email: string; tenant: string; role: string; groups: string[];
  via: "key" | "token" | "session" | "local"; sign_in: boolean; csrf_token?: string;
}

export class Api {
  // A signed-in page's CSRF token: every change it asks for carries it (the session cookie alone is refused).
  csrf = "";

  constructor(private readonly apiKey: () => string) {}

  private headers(json: boolean, method = "GET"): HeadersInit {
    const headers: Record<string, string> = {};
    if (json) headers["Content-Type"] = "application/json";
    const key = this.apiKey();
    if (key) headers["Authorization"] = `Bearer ${key}`;
    else if (this.csrf && method !== "GET" && method !== "HEAD") headers["X-CSRF-Token"] = this.csrf;
    return headers;
  }

  private async send(method: string, path: string, body?: BodyInit, json = true, signal?: AbortSignal): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(path, { method, headers: this.headers(json && body !== undefined, method), body, signal });
    } catch (e) {
      if (e instanceof DOMException && e.name === "AbortError") throw e;
      throw unreachable();
    }
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, body === undefined ? undefined : JSON.stringify(body));
    return await response.json() as T;
  }

  ready(): Promise<Ready> {
    return fetch("/readyz").then(r => r.json() as Promise<Ready>, () => { throw unreachable(); });
  }

  me(): Promise<Me> { return this.json("GET", "/v1/me"); }
  // Whether the server offers sign-in, and whether the page should go to the provider by itself.
  signInConfig(): Promise<{ sign_in: boolean; auto_sign_in?: boolean }> {
    return fetch("/auth/config").then(r => r.json() as Promise<{ sign_in: boolean; auto_sign_in?: boolean }>)
      .catch(() => ({ sign_in: false }));
  }
  signOut(): Promise<{ end_session_url: string }> { return this.json("POST", "/auth/logout", {}); }

  collections(): Promise<{ data: Collection[] }> { return this.json("GET", "/v1/collections"); }
  createCollection(name: string, embedder: string): Promise<Collection> {
    return this.json("POST", "/v1/collections", embedder ? { name, embedder } : { name });
  }
  deleteCollection(name: string): Promise<unknown> { return this.json("DELETE", `/v1/collections/${enc(name)}`); }
  documents(name: string): Promise<{ data: DocumentInfo[] }> { return this.json("GET", `/v1/collections/${enc(name)}/documents`); }
  deleteDocument(name: string, id: number): Promise<unknown> { return this.json("DELETE", `/v1/collections/${enc(name)}/documents/${id}`); }
  job(id: string): Promise<Job> { return this.json("GET", `/v1/jobs/${enc(id)}`); }
  models(): Promise<{ data: Model[] }> { return this.json("GET", "/v1/models"); }
  search(body: Record<string, unknown>): Promise<{ hits: SearchHit[] }> { return this.json("POST", "/v1/search", body); }

  documentText(collection: string, id: number): Promise<{ text: string }> {
    return this.json("GET", `/v1/collections/${enc(collection)}/documents/${id}/text`);
  }
  async documentFile(collection: string, id: number): Promise<ArrayBuffer> {
    return await (await this.send("GET", `/v1/collections/${enc(collection)}/documents/${id}/file`)).arrayBuffer();
  }

  conversations(collection: string): Promise<{ data: ConversationSummary[] }> {
    return this.json("GET", `/v1/conversations?collection=${enc(collection)}`);
  }
  conversation(id: string): Promise<Conversation> { return this.json("GET", `/v1/conversations/${enc(id)}`); }
  renameConversation(id: string, title: string): Promise<ConversationSummary> {
    return this.json("PATCH", `/v1/conversations/${enc(id)}`, { title });
  }
  deleteConversation(id: string): Promise<unknown> { return this.json("DELETE", `/v1/conversations/${enc(id)}`); }

  async upload(collection: string, files: File[]): Promise<Job> {
    const form = new FormData();
    for (const f of files) form.append("files", f, f.name);
    const response = await this.send("POST", `/v1/collections/${enc(collection)}/documents`, form, false);
    return await response.json() as Job;
  }

  // POST with "stream": true; yields the server's events as they arrive.
  async *stream(path: string, body: unknown, signal: AbortSignal): AsyncGenerator<ServerEvent> {
    const response = await this.send("POST", path, JSON.stringify(body), true, signal);
    if (!response.body) throw new ApiError(0, "no_stream", "The server's answer had no body.");
    yield* readEvents(response.body);
  }
}

const enc = encodeURIComponent;

async function errorOf(response: Response): Promise<ApiError> {
  let code = `http_${response.status}`, message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json() as { error?: { code?: string; message?: string } };
    if (body.error?.code) code = body.error.code;
    if (body.error?.message) message = body.error.message;
  } catch { /* not JSON: keep the status line */ }
  const retry = response.headers.get("Retry-After");
  if (retry) message += ` (try again in ${retry} s)`;
  return new ApiError(response.status, code, message);
}
