// The conversation: questions go to POST /v1/ask with "stream": true; the answer's tokens appear as
// they come, then its citations become buttons that open the source panel, and a details block shows
// the back-end, the retrieval mode, the cache and a timeline of the stages.

import { Api, ApiError, type Answer, type Citation, type Source, type Timings } from "./api";
import { byId, formatMs, h } from "./dom";
import { remember, type Settings } from "./settings";
import { SourcePanel } from "./source_panel";
import { splitAtMarkers } from "./text_spans";

interface Turn { question: string; answer: Answer; mode: string }

const stages = ["embed", "retrieve", "rerank", "generate"] as const;

export class Chat {
  private collection: string | null = null;
  private conversationId = "";
  private turns: Turn[] = [];
  private running: AbortController | null = null;
  private readonly messages = byId<HTMLOListElement>("messages");
  private readonly question = byId<HTMLTextAreaElement>("question");
  private readonly button = byId<HTMLButtonElement>("ask-button");

  constructor(private readonly api: Api, private readonly settings: () => Settings,
              private readonly panel: SourcePanel, private readonly report: (error: unknown) => void) {
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
  }

  // Each collection keeps its own conversation in this browser.
  open(collection: string | null): void {
    if (collection === this.collection) return;
    this.running?.abort();
    this.collection = collection;
    byId("chat-collection").textContent = collection ?? "";
    this.question.disabled = this.button.disabled = !collection;
    const saved = collection ? remember.get(`conversation.${collection}`) : null;
    const parsed = saved ? JSON.parse(saved) as { id: string; turns: Turn[] } : { id: "", turns: [] };
    this.conversationId = parsed.id;
    this.turns = parsed.turns;
    this.messages.replaceChildren();
    if (!collection) this.messages.append(h("li", { class: "empty" }, "Create or pick a collection, add documents, then ask."));
    for (const turn of this.turns) {
      this.messages.append(userMessage(turn.question));
      const item = assistantMessage();
      this.messages.append(item);
      this.renderAnswer(item, turn.answer, turn.mode);
    }
    this.messages.scrollTop = this.messages.scrollHeight;
  }

  private reset(): void {
    this.running?.abort();
    this.conversationId = "";
    this.turns = [];
    this.save();
    this.messages.replaceChildren();
  }

  private save(): void {
    if (this.collection) remember.set(`conversation.${this.collection}`, JSON.stringify({ id: this.conversationId, turns: this.turns.slice(-20) }));
  }

  async ask(question: string): Promise<void> {
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
      this.turns.push({ question, answer, mode: s.mode });
      this.save();
      this.renderAnswer(item, answer, s.mode);
    } catch (e) {
      item.classList.remove("streaming");
      if (e instanceof DOMException && e.name === "AbortError") {
        item.append(h("p", { class: "hint" }, "Stopped."));
      } else {
        if (e instanceof ApiError && e.code === "not_found" && /conversation/.test(e.message)) {
          this.conversationId = "";  // deleted on the server (or past its bound): the next question starts afresh
          this.save();
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

  private renderAnswer(item: HTMLElement, answer: Answer, mode: string): void {
    item.classList.remove("streaming");
    const text = item.querySelector(".text")!;
    const citations = answer.citations ?? [];
    const parts = splitAtMarkers(answer.answer, citations.map((c, i) => ({ start: c.answer_start, end: c.answer_end, number: i })));
    text.replaceChildren(...parts.map(p => typeof p === "string" ? p : citeButton(citations[p.number]!, answer.sources, this.panel)));
    if (!answer.answer.trim()) text.textContent = "No answer: nothing relevant was found in the collection.";
    item.querySelector(".details")?.remove();
    item.append(details(answer, mode));
  }
}

function userMessage(question: string): HTMLLIElement {
  return h("li", { class: "message user" }, h("p", { class: "who" }, "You"), h("div", { class: "text" }, question));
}

function assistantMessage(): HTMLLIElement {
  return h("li", { class: "message assistant" }, h("p", { class: "who" }, "Kotae"), h("div", { class: "text" }));
}

function citeButton(citation: Citation, sources: Source[], panel: SourcePanel): HTMLButtonElement {
  const page = citation.page ? `, page ${citation.page}` : "";
  const button = h("button", {
    type: "button", class: "cite", "aria-pressed": "false", "data-source": citation.number,
    "aria-label": `Source ${citation.number}: ${citation.title || citation.document}${page}`,
    title: `${citation.title || citation.document}${page}`,
  }, `${citation.number}`);
  button.addEventListener("click", () => panel.show(citation, sources, button));
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
