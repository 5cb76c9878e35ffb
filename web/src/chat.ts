// The conversation: questions go to POST /v1/ask with "stream": true; the answer's tokens appear as
// they come, then it is rendered as sanitised Markdown with its citations as buttons that open the
// source panel, and a details block shows the back-end, the retrieval mode, the cache and a timeline
// of the stages. Conversations are kept by the server; this browser remembers which one was open.
// In search mode the same box lists search hits instead.

import { Api, ApiError, type Answer, type Citation, type Conversation, type Source, type Timings } from "./api";
import { byId, formatMs, h } from "./dom";
import { renderMarkdown } from "./markdown";
import { placeOf } from "./place";
import { showHits } from "./search_view";
import { remember, type Settings } from "./settings";
import { citationSpan, SourcePanel } from "./source_panel";

const stages = ["embed", "retrieve", "rerank", "generate"] as const;

export class Chat {
  private collection: string | null = null;
  private conversationId = "";
  private searching = false;
  private running: AbortController | null = null;
  private readonly messages = byId<HTMLOListElement>("messages");
  private readonly question = byId<HTMLTextAreaElement>("question");
  private readonly button = byId<HTMLButtonElement>("ask-button");

  constructor(private readonly api: Api, private readonly settings: () => Settings,
              private readonly panel: SourcePanel, private readonly report: (error: unknown) => void,
              private readonly changed: (conversationId: string) => void) {
    byId<HTMLFormElement>("ask-form").addEventListener("submit", e => {
      e.preventDefault();
      if (this.running) this.running.abort();
      else void this.ask(this.question.value.trim());
    });
    this.question.addEventListener("keydown", e => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        byId<HTMLFormElement>("ask-form").requestSubmit();
      }
    });
    byId("new-conversation").addEventListener("click", () => { this.reset(); this.question.focus(); });
    for (const [id, searching] of [["mode-ask", false], ["mode-search", true]] as const) {
      byId(id).addEventListener("click", () => this.setSearching(searching));
    }
  }

  get conversation(): string { return this.conversationId; }

  private setSearching(searching: boolean): void {
    this.searching = searching;
    byId("mode-ask").setAttribute("aria-pressed", String(!searching));
    byId("mode-search").setAttribute("aria-pressed", String(searching));
    this.button.textContent = searching ? "Search" : "Ask";
    this.question.placeholder = searching ? "Search the documents (Enter to search)"
      : "Ask a question about the documents (Enter to send, Shift+Enter for a new line)";
  }

  // Each collection reopens the conversation this browser had open in it, as the server keeps it.
  open(collection: string | null): void {
    if (collection === this.collection) return;
    this.running?.abort();
    this.collection = collection;
    byId("chat-collection").textContent = collection ?? "";
    this.question.disabled = this.button.disabled = !collection;
    this.conversationId = "";
    this.messages.replaceChildren();
    if (!collection) this.messages.append(h("li", { class: "empty" }, "Create or pick a collection, add documents, then ask."));
    const saved = collection ? remember.get(`conversation.${collection}`) : null;
    if (saved) void this.resume(saved);
  }

  // A stored conversation, shown turn by turn; the next question follows it up.
  async resume(id: string): Promise<void> {
    let stored: Conversation;
    try {
      stored = await this.api.conversation(id);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) this.report(e);
      if (this.collection) remember.set(`conversation.${this.collection}`, null);
      return;
    }
    if (stored.collection !== this.collection) return;
    this.running?.abort();
    this.conversationId = stored.id;
    this.remember();
    this.messages.replaceChildren();
    for (const turn of stored.turns) {
      this.messages.append(userMessage(turn.question));
      const item = assistantMessage();
      this.messages.append(item);
      this.renderAnswer(item, { answer: turn.answer, citations: turn.citations, sources: turn.sources }, null);
    }
    this.messages.scrollTop = this.messages.scrollHeight;
    this.changed(this.conversationId);
  }

  reset(): void {
    this.running?.abort();
    this.conversationId = "";
    this.remember();
    this.messages.replaceChildren();
    this.changed("");
  }

  private remember(): void {
    if (this.collection) remember.set(`conversation.${this.collection}`, this.conversationId || null);
  }

  async ask(question: string): Promise<void> {
    if (this.searching) return this.search(question);
    if (!question || !this.collection) return;
    const collection = this.collection, s = this.settings();
    this.question.value = "";
    this.messages.querySelector(".empty")?.remove();
    this.messages.append(userMessage(question));
    const item = assistantMessage();
    item.classList.add("streaming");
    this.messages.append(item);
    const text = item.querySelector(".text")!;
    const scroll = () => { this.messages.scrollTop = this.messages.scrollHeight; };
    scroll();

    const request: Record<string, unknown> = {
      collection, question, stream: true, mode: s.mode, k: s.k, rerank: s.rerank,
      max_tokens: s.max_tokens, temperature: s.temperature,
    };
    if (s.backend) request.backends = [s.backend];
    if (this.conversationId) request.conversation_id = this.conversationId;

    this.running = new AbortController();
    this.button.textContent = "Stop";
    let sources: Source[] = [];
    let answer: Answer | null = null;
    try {
      for await (const { event, data } of this.api.stream("/v1/ask", request, this.running.signal)) {
        const payload = JSON.parse(data) as Record<string, unknown>;
        if (event === "sources") {
          sources = payload.sources as Source[];
          this.conversationId = payload.conversation_id as string;
        } else if (event === "token") {
          text.append(payload.text as string);
          scroll();
        } else if (event === "restart") {
          text.textContent = "";
        } else if (event === "error") {
          const e = (payload as { error: { code: string; message: string } }).error;
          throw new ApiError(500, e.code, e.message);
        } else if (event === "done") {
          answer = { ...(payload as unknown as Answer), conversation_id: this.conversationId };
          if (!answer.sources?.length) answer.sources = sources;
        }
      }
      if (!answer) throw new ApiError(0, "incomplete", "The answer stopped before it was complete.");
      this.remember();
      this.renderAnswer(item, answer, s.mode);
      this.changed(this.conversationId);
    } catch (e) {
      item.classList.remove("streaming");
      if (e instanceof DOMException && e.name === "AbortError") {
        item.append(h("p", { class: "hint" }, "Stopped."));
      } else {
        if (e instanceof ApiError && e.code === "not_found" && /conversation/.test(e.message)) {
          this.conversationId = "";  // deleted on the server (or past its bound): the next question starts afresh
          this.remember();
        }
        item.append(h("p", { class: "error" }, e instanceof Error ? e.message : String(e)));
        this.report(e);
      }
    } finally {
      this.running = null;
      this.button.textContent = "Ask";
      scroll();
    }
  }

  private async search(query: string): Promise<void> {
    if (!query || !this.collection) return;
    const s = this.settings();
    this.question.value = "";
    this.messages.querySelector(".empty")?.remove();
    this.messages.append(userMessage(query));
    const item = h("li", { class: "message search" }, h("p", { class: "who" }, "Search"));
    this.messages.append(item);
    try {
      const result = await this.api.search({ collection: this.collection, query, mode: s.mode, k: s.k, rerank: s.rerank });
      showHits(item, query, result.hits, (span, opener) => void this.panel.show(span, opener));
    } catch (e) {
      item.append(h("p", { class: "error" }, e instanceof Error ? e.message : String(e)));
      this.report(e);
    }
    this.messages.scrollTop = this.messages.scrollHeight;
  }

  private renderAnswer(item: HTMLElement, answer: Pick<Answer, "answer" | "citations" | "sources"> & Partial<Answer>,
                       mode: string | null): void {
    item.classList.remove("streaming");
    const text = item.querySelector(".text")!;
    const citations = answer.citations ?? [], sources = answer.sources ?? [];
    const markers = citations.map((c, i) => ({ start: c.answer_start, end: c.answer_end, number: i }));
    text.classList.add("markdown");
    text.replaceChildren(renderMarkdown(answer.answer, markers, i => citeButton(citations[i]!, sources, this.panel)));
    if (!answer.answer.trim()) text.textContent = "No answer: nothing relevant was found in the collection.";
    item.querySelector(".details")?.remove();
    if (mode && answer.backend) item.append(details(answer as Answer, mode));
  }
}

function userMessage(question: string): HTMLLIElement {
  return h("li", { class: "message user" }, h("p", { class: "who" }, "You"), h("div", { class: "text" }, question));
}

function assistantMessage(): HTMLLIElement {
  return h("li", { class: "message assistant" }, h("p", { class: "who" }, "Kotae"), h("div", { class: "text" }));
}

function citeButton(citation: Citation, sources: Source[], panel: SourcePanel): HTMLButtonElement {
  const source = sources.find(s => s.number === citation.number);
  const page = placeOf({ format: citation.format, page: citation.page ?? 0, page_last: citation.page ?? 0,
    table: source?.table, row_first: source?.row_first, row_last: source?.row_last });
  const button = h("button", {
    type: "button", class: "cite", "aria-pressed": "false", "data-source": citation.number,
    "aria-label": `Source ${citation.number}: ${citation.title || citation.document}${page}`,
    title: `${citation.title || citation.document}${page}`,
  }, `${citation.number}`);
  button.addEventListener("click", () => void panel.show(citationSpan(citation, sources), button, sources));
  return button;
}

function details(answer: Answer, mode: string): HTMLElement {
  const t: Timings = answer.timings_ms ?? {};
  const total = t.total ?? stages.reduce((sum, s) => sum + (t[s] ?? 0), 0);
  let offset = 0;
  const rows = stages.flatMap(stage => {
    const ms = t[stage] ?? 0;
    const left = total > 0 ? (offset / total) * 100 : 0, width = total > 0 ? (ms / total) * 100 : 0;
    offset += ms;
    const fill = h("span", {});
    fill.style.left = `${left.toFixed(1)}%`;  // CSSOM, not a style attribute: the page's CSP forbids inline styles
    fill.style.width = `${width.toFixed(1)}%`;
    return [h("span", {}, stage),
      h("span", { class: "bar", role: "img", "aria-label": `${stage} ${formatMs(ms)}` }, fill),
      h("span", { class: "ms" }, formatMs(ms))];
  });
  const cache = answer.cache ?? "off";
  return h("details", { class: "details" },
    h("summary", {}, `${answer.backend} · ${mode} · cache ${cache} · ${formatMs(total)}`),
    h("dl", {},
      h("dt", {}, "Back-end"), h("dd", { "data-field": "backend" }, answer.backend),
      h("dt", {}, "Retrieval"), h("dd", { "data-field": "mode" }, mode),
      h("dt", {}, "Cache"), h("dd", { "data-field": "cache" }, cache === "hit" ? "hit (answered from the cache)" : cache),
      h("dt", {}, "Sources"), h("dd", {}, String(answer.sources?.length ?? 0)),
      answer.fallbacks?.length ? h("dt", {}, "Fell back") : null,
      answer.fallbacks?.length ? h("dd", {}, answer.fallbacks.map(f => `${f.backend}: ${f.error}`).join("; ")) : null),
    h("div", { class: "timeline", "aria-label": "Stage latencies" }, ...rows,
      h("strong", {}, "total"), h("span", {}), h("strong", { class: "ms" }, formatMs(total))));
}
