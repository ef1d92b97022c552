// The explorer page: asks over POST {api}/ask and reads the server-sent events from the
// streamed response body (EventSource cannot POST), lists documents and their chunk spans.
// Document text is untrusted: every node is built with createElement and textContent,
// never innerHTML. Byte offsets are UTF-8 byte offsets, so spans are cut from the
// encoded bytes (TextEncoder/TextDecoder), never with JavaScript string indices.
"use strict";

(() => {
  const api = document.querySelector('meta[name="graphrag-api"]').content;
  const encoder = new TextEncoder();
  const MAX_TURNS = 20;

  const REFUSALS = {
    "no-evidence": "Nothing stored matched the question, so no model was asked and there is nothing to quote.",
    "model-declined": "The model read the evidence and said that it does not answer the question.",
    "unreadable-response": "The model's reply could not be read as an answer with citations, so none of it is shown.",
    "no-citations": "The model answered without quoting the evidence. An answer without citations is never shown.",
    "citation-not-found": "A quote the model gave is not in the stored text of the passage it named, so the answer is not shown.",
  };
  const ERRORS = {
    "retrieval-failed": "Searching the documents failed before any evidence was read. Nothing was asked of the model.",
    "model-failed": "The model failed or could not be reached after the evidence was read. Nothing was verified.",
    "connection-failed": "The server could not be reached.",
    "stream-broken": "The connection broke while the answer was streaming. Nothing was verified.",
    "stream-ended": "The stream ended before a verified answer or a refusal arrived. Nothing was verified.",
    "unreadable-event": "The server sent an event this page cannot read.",
  };

  const $ = (id) => document.getElementById(id);

  // An element with attributes and children; strings become text nodes, never markup.
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else node.setAttribute(name, String(value));
    }
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  // Answer text as paragraphs: a blank line starts one, a single line break is a space (a
  // model copies the source's hard line breaks). Quotes are never reflowed: they show the stored text.
  function paragraphs(text) {
    return String(text)
      .replace(/\r\n?/g, "\n")
      .split(/\n[ \t]*\n\s*/)
      .map((part) => part.replace(/[ \t]*\n[ \t]*/g, " ").trim())
      .filter((part) => part.length > 0)
      .map((part) => el("p", {}, part));
  }

  // A source URI that wraps after its separators (/ : . - _ ? & = #), never inside a word.
  function uriNode(uri) {
    const node = el("span", { class: "uri" });
    for (const part of String(uri).split(/(?<=[/:.\-_?&=#])/)) {
      node.append(part, document.createElement("wbr"));
    }
    return node;
  }

  // The title when the document has one; the URI is shown once either way.
  function sourceNodes(title, uri) {
    return title ? [el("span", { class: "source" }, title), " ", uriNode(uri)] : [uriNode(uri)];
  }

  function show(id, visible) {
    $(id).hidden = !visible;
  }

  function setStatus(text) {
    $("status").textContent = text;
  }

  function plural(count, one, many) {
    return `${count} ${count === 1 ? one : many}`;
  }

  function seconds(value) {
    return typeof value === "number" ? `${value.toFixed(3)} s` : "?";
  }

  function pagesOf(first, last) {
    if (first === undefined || first === null) return null;
    return last !== undefined && last !== null && last !== first ? `pages ${first}–${last}` : `page ${first}`;
  }

  // --- bytes -------------------------------------------------------------------------

  // The text before, inside and after [startByte, endByte) of an item's text, whose first
  // byte is itemStart; null when the span is outside the item or cuts a code point.
  function byteSlices(text, itemStart, startByte, endByte) {
    const bytes = encoder.encode(text);
    const from = startByte - itemStart;
    const to = endByte - itemStart;
    if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || from > to || to > bytes.length) return null;
    // fatal: a span inside a code point is refused; ignoreBOM: a leading U+FEFF is text.
    const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    try {
      return {
        before: decoder.decode(bytes.subarray(0, from)),
        quote: decoder.decode(bytes.subarray(from, to)),
        after: decoder.decode(bytes.subarray(to)),
      };
    } catch (error) {
      return null;
    }
  }

  // --- server-sent events from a streamed body ------------------------------------------

  // Calls onEvent(name, data) for each complete event; lines end in \n, \r\n or \r.
  async function readEvents(body, onEvent) {
    const reader = body.getReader();
    const decoder = new TextDecoder("utf-8");
    let buffer = "";
    let name = "";
    let data = [];
    const line = (text) => {
      if (text === "") {
        if (data.length) onEvent(name || "message", data.join("\n"));
        name = "";
        data = [];
        return;
      }
      if (text.startsWith(":")) return; // a comment (keep-alive)
      const colon = text.indexOf(":");
      const field = colon < 0 ? text : text.slice(0, colon);
      let value = colon < 0 ? "" : text.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    };
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let start = 0;
      for (let index = 0; index < buffer.length; index += 1) {
        const char = buffer[index];
        if (char !== "\n" && char !== "\r") continue;
        // A \r at the end may be the first half of a \r\n still on its way.
        if (char === "\r" && index + 1 === buffer.length && !done) break;
        line(buffer.slice(start, index));
        if (char === "\r" && buffer[index + 1] === "\n") index += 1;
        start = index + 1;
      }
      buffer = buffer.slice(start);
      if (done) return; // an event without its blank line is dropped, as EventSource does
    }
  }

  // --- asking --------------------------------------------------------------------------

  let controller = null;
  let evidence = new Map();
  let provisional = "";
  let finalState = false;
  const history = [];

  function setState(state) {
    const stream = $("stream");
    stream.dataset.state = state;
    stream.setAttribute("aria-busy", state === "asking" || state === "streaming" ? "true" : "false");
  }

  function reset() {
    evidence = new Map();
    provisional = "";
    finalState = false;
    for (const id of ["provisional", "verified", "refused", "error", "stream-idle", "withdrawn-note"]) show(id, false);
    $("provisional").dataset.state = "empty";
    $("provisional-label").textContent = "Provisional: streaming from the model, not checked yet";
    $("provisional-text").replaceChildren();
    $("answer-text").replaceChildren();
    $("citations").replaceChildren();
    $("refusal-reason").replaceChildren();
    $("refusal-explanation").replaceChildren();
    $("error-code").replaceChildren();
    $("error-explanation").replaceChildren();
    $("receipt").replaceChildren();
    $("evidence").replaceChildren();
    $("limits").replaceChildren();
    $("evidence-summary").replaceChildren();
    show("evidence-section", false);
  }

  function busy(active) {
    $("ask-button").disabled = active;
    $("stop-button").disabled = !active;
  }

  function updateHistory() {
    $("history-count").textContent = history.length ? `${plural(history.length, "turn", "turns")} kept` : "none kept";
    $("clear-history").disabled = history.length === 0;
    if (!history.length) $("follow-up").checked = false;
  }

  async function ask(event) {
    event.preventDefault();
    const question = $("question").value.trim();
    if (!question) {
      setStatus("Type a question first.");
      $("question").focus();
      return;
    }
    if (controller) controller.abort();
    reset();
    const turns = $("follow-up").checked ? history.slice(-MAX_TURNS) : [];
    const mine = new AbortController();
    controller = mine;
    busy(true);
    setState("asking");
    setStatus("Searching the documents…");
    try {
      const response = await fetch(`${api}/ask`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({ question, history: turns }),
        signal: mine.signal,
      });
      if (!response.ok) {
        await showProblem(response);
      } else {
        await readEvents(response.body, (name, data) => handle(name, data, question));
        if (!finalState) showError("stream-ended");
      }
    } catch (error) {
      if (mine.signal.aborted) {
        if (controller === mine) {
          withdrawProvisional("Stopped: this provisional text was not verified and is not an answer.");
          setState("stopped");
          setStatus("Stopped before the answer was verified.");
        }
      } else if (!finalState) {
        showError(provisional || evidence.size ? "stream-broken" : "connection-failed");
      }
    } finally {
      if (controller === mine) {
        controller = null;
        busy(false);
      }
    }
  }

  function handle(name, raw, question) {
    let data;
    try {
      data = JSON.parse(raw);
    } catch (error) {
      showError("unreadable-event");
      return;
    }
    if (name === "retrieved") showEvidence(data);
    else if (name === "delta") addDelta(data);
    else if (name === "verified") showVerified(data, question);
    else if (name === "refused") showRefused(data);
    else if (name === "error") showError(typeof data.code === "string" ? data.code : "unknown");
  }

  function addDelta(data) {
    if (typeof data.text !== "string") return;
    provisional += data.text;
    show("provisional", true);
    $("provisional").dataset.state = "streaming";
    $("provisional-text").replaceChildren(...paragraphs(provisional));
    setState("streaming");
    setStatus("The model is answering; the text is provisional until its citations are checked.");
  }

  function withdrawProvisional(note) {
    if (!provisional) {
      show("provisional", false);
      return;
    }
    show("provisional", true);
    $("provisional").dataset.state = "withdrawn";
    $("provisional-label").textContent = "Provisional text withdrawn";
    $("provisional-text").replaceChildren(el("del", { "data-withdrawn": "true" }, ...paragraphs(provisional)));
    $("withdrawn-note").textContent = note;
    show("withdrawn-note", true);
  }

  function showReceipt(receipt) {
    if (!receipt) return;
    const parts = [plural(receipt.chatCalls ?? 0, "model call", "model calls")];
    if (receipt.inputTokens !== undefined && receipt.inputTokens !== null) {
      parts.push(`${receipt.inputTokens} input and ${receipt.outputTokens} output tokens`);
    }
    parts.push(`retrieval ${seconds(receipt.retrievalSeconds)}`, `answer ${seconds(receipt.answerSeconds)}`);
    $("receipt").textContent = `Receipt: ${parts.join(" · ")}`;
  }

  // --- evidence ------------------------------------------------------------------------

  function showEvidence(data) {
    const items = Array.isArray(data.items) ? data.items : [];
    evidence = new Map(items.map((item) => [item.chunkId, item]));
    const summary = [
      `${plural(items.length, "passage", "passages")}, ${data.utf8Bytes ?? 0} UTF-8 bytes`,
      data.omittedItems ? `${data.omittedItems} left out by the budget` : null,
      data.scope ? `scope ${data.scope.kind}: ${plural(data.scope.documents, "document", "documents")}` : null,
      data.traceId ? `trace ${data.traceId}` : null,
    ].filter(Boolean);
    $("evidence-summary").textContent = summary.join(" · ");
    const limits = Array.isArray(data.limitsReached) ? data.limitsReached : [];
    $("limits").replaceChildren(
      ...(limits.length
        ? limits.map((limit) => el("li", { "data-limit": limit.name }, `${limit.name}: held to ${limit.value}`))
        : [el("li", { "data-limit": "" }, "None")]),
    );
    $("evidence").replaceChildren(...items.map(evidenceItem));
    show("evidence-section", true);
    setState("streaming");
    setStatus(`Found ${plural(items.length, "passage", "passages")}; waiting for the model…`);
  }

  function evidenceItem(item, index) {
    const facts = [
      `bytes ${item.startByte}–${item.endByte}`,
      `score ${Number(item.score).toFixed(4)}`,
      pagesOf(item.pages?.[0]?.page, item.pages?.[item.pages.length - 1]?.page),
      item.grounding === "Chunk" ? "offsets into the stored chunk's own text" : null,
      item.textOrigin ? `text from ${item.textOrigin}` : null,
    ].filter(Boolean);
    const routes = el(
      "table",
      { class: "routes" },
      el("caption", {}, "Routes"),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { scope: "col" }, "Route"),
          el("th", { scope: "col", class: "number" }, "Rank"),
          el("th", { scope: "col", class: "number" }, "Native score"),
          el("th", { scope: "col", class: "number" }, "Rank score"),
        ),
      ),
      el(
        "tbody",
        {},
        ...(item.routes || []).map((route) =>
          el(
            "tr",
            { "data-route": route.route, "data-rank": route.rank },
            el("th", { scope: "row" }, route.route),
            el("td", { class: "number" }, String(route.rank)),
            el("td", { class: "number" }, Number(route.nativeScore).toFixed(4)),
            el("td", { class: "number" }, Number(route.rankScore).toFixed(4)),
          ),
        ),
      ),
    );
    return el(
      "li",
      {
        "data-chunk-id": item.chunkId,
        "data-document-id": item.documentId,
        "data-start-byte": item.startByte,
        "data-end-byte": item.endByte,
        "data-rank": index + 1,
      },
      ...sourceNodes(item.title, item.sourceUri),
      el("div", { class: "span-facts" }, facts.join(" · ")),
      routes,
      el("details", {}, el("summary", {}, "Passage text"), el("div", { class: "chunk-text" }, item.text)),
    );
  }

  // --- the outcome ---------------------------------------------------------------------

  function finish(state, status) {
    finalState = true;
    setState(state);
    setStatus(status);
  }

  function showVerified(data, question) {
    show("provisional", false);
    $("answer-text").replaceChildren(...paragraphs(data.answer));
    const citations = Array.isArray(data.citations) ? data.citations : [];
    $("citations").replaceChildren(...citations.map(citationItem));
    markCitedEvidence(citations);
    show("verified", true);
    showReceipt(data.receipt);
    history.push({ question, answer: data.answer });
    if (history.length > MAX_TURNS) history.shift();
    updateHistory();
    finish("verified", `Verified answer with ${plural(citations.length, "citation", "citations")}.`);
  }

  // Each evidence item says which citations quote it.
  function markCitedEvidence(citations) {
    for (const entry of $("evidence").children) {
      const numbers = citations
        .map((citation, index) => (citation.chunkId === entry.dataset.chunkId ? index + 1 : null))
        .filter((number) => number !== null);
      if (!numbers.length) continue;
      entry.dataset.cited = numbers.join(" ");
      const label = numbers.length === 1 ? "citation" : "citations";
      entry.insertBefore(el("p", { class: "cited" }, `Quoted by ${label} ${numbers.join(", ")}`), entry.firstChild);
    }
  }

  function citationItem(citation, index) {
    const number = index + 1;
    const item = evidence.get(citation.chunkId);
    const facts = [
      `bytes ${citation.startByte}–${citation.endByte} (${citation.endByte - citation.startByte} bytes)`,
      pagesOf(citation.page, citation.endPage),
      citation.grounding === "Chunk" ? "offsets into the stored chunk's own text" : null,
      citation.textOrigin ? `text from ${citation.textOrigin}` : null,
    ].filter(Boolean);
    const entry = el(
      "li",
      {
        "data-citation": number,
        "data-chunk-id": citation.chunkId,
        "data-document-id": citation.documentId,
        "data-start-byte": citation.startByte,
        "data-end-byte": citation.endByte,
      },
      ...(item ? sourceNodes(item.title, item.sourceUri) : [el("span", { class: "source" }, citation.documentId)]),
      el("div", { class: "span-facts" }, facts.join(" · ")),
    );
    const slices = item ? byteSlices(item.text, item.startByte, citation.startByte, citation.endByte) : null;
    if (slices === null) {
      entry.dataset.highlighted = "false";
      entry.append(
        el("blockquote", { class: "chunk-text" }, citation.quote),
        el("p", { class: "problem" }, "This span could not be highlighted: its passage is not in the evidence list."),
      );
      return entry;
    }
    entry.dataset.highlighted = "true";
    const mark = el(
      "mark",
      { "data-citation-mark": number, "data-start-byte": citation.startByte, "data-end-byte": citation.endByte },
      slices.quote,
    );
    entry.append(el("blockquote", { class: "chunk-text", "data-chunk-id": citation.chunkId }, slices.before, mark, slices.after));
    if (slices.quote !== citation.quote) {
      entry.dataset.quoteMatches = "false";
      entry.append(el("p", { class: "problem" }, "The highlighted bytes differ from the quote the server sent."));
    }
    return entry;
  }

  function showRefused(data) {
    const reason = typeof data.reason === "string" ? data.reason : "unknown";
    $("refusal-reason").textContent = reason;
    $("refused").dataset.reason = reason;
    $("refusal-explanation").textContent = REFUSALS[reason] || "The answer was refused.";
    show("refused", true);
    withdrawProvisional("Withdrawn: this provisional text was not verified and is not an answer.");
    showReceipt(data.receipt);
    finish("refused", `Refused (${reason}).`);
  }

  function showError(code, detail) {
    $("error-code").textContent = code;
    $("error").dataset.code = code;
    $("error-explanation").textContent = detail || ERRORS[code] || "The request failed.";
    show("error", true);
    withdrawProvisional("Withdrawn: this provisional text was not verified and is not an answer.");
    finish("error", `Failed (${code}).`);
  }

  // A refusal before any work: application/problem+json with a stable code.
  async function problemOf(response) {
    try {
      const problem = await response.json();
      return {
        code: typeof problem.code === "string" ? problem.code : `http-${response.status}`,
        detail: typeof problem.detail === "string" ? problem.detail : problem.title,
      };
    } catch (error) {
      return { code: `http-${response.status}`, detail: null };
    }
  }

  async function showProblem(response) {
    const problem = await problemOf(response);
    showError(problem.code, problem.detail);
  }

  // --- documents -----------------------------------------------------------------------

  let documentsLoaded = false;

  async function loadDocuments() {
    const limit = Math.min(Math.max(Number.parseInt($("documents-limit").value, 10) || 50, 1), 1000);
    $("documents-limit").value = String(limit);
    $("documents-status").textContent = "Loading documents…";
    try {
      const response = await fetch(`${api}/documents?limit=${limit}`, { headers: { Accept: "application/json" } });
      if (!response.ok) {
        const problem = await problemOf(response);
        $("documents-status").textContent = `Could not list documents (${problem.code}).`;
        return;
      }
      const data = await response.json();
      const documents = Array.isArray(data.documents) ? data.documents : [];
      $("documents-body").replaceChildren(...documents.map(documentRow));
      show("documents", documents.length > 0);
      documentsLoaded = true;
      const more = data.more ? `; ${data.more} more not shown (raise the limit)` : "";
      $("documents-status").textContent = `${plural(documents.length, "document", "documents")}${more}.`;
    } catch (error) {
      $("documents-status").textContent = "The server could not be reached.";
    }
  }

  function documentRow(doc) {
    const name = doc.title || doc.sourceUri;
    const open = el("button", { type: "button", "aria-label": `Show the chunks of ${name}` }, "Chunks");
    open.addEventListener("click", () => openDocument(doc.documentId));
    return el(
      "tr",
      { "data-document-id": doc.documentId },
      el("td", {}, doc.title || "(untitled)"),
      el("td", {}, uriNode(doc.sourceUri)),
      el("td", {}, doc.mediaType || ""),
      el("td", { class: "number" }, doc.utf8Length === null || doc.utf8Length === undefined ? "" : String(doc.utf8Length)),
      el("td", { class: "number" }, String(doc.chunks ?? "")),
      el("td", {}, open),
    );
  }

  const METADATA = [
    ["documentId", "Document id"],
    ["sourceUri", "Source URI"],
    ["title", "Title"],
    ["mediaType", "Media type"],
    ["published", "Published"],
    ["publisher", "Publisher"],
    ["url", "URL"],
    ["utf8Length", "UTF-8 bytes"],
    ["contentHash", "Content hash (SHA-256)"],
    ["runId", "Ingestion run"],
    ["textOrigin", "Text from"],
    ["grounding", "Grounding (Chunk: spans are in each chunk's own text)"],
  ];

  async function openDocument(id) {
    $("documents-status").textContent = "Loading the document…";
    try {
      const response = await fetch(`${api}/documents/${encodeURIComponent(id)}`, { headers: { Accept: "application/json" } });
      if (!response.ok) {
        const problem = await problemOf(response);
        $("documents-status").textContent = `Could not open the document (${problem.code}).`;
        return;
      }
      const doc = await response.json();
      const chunks = Array.isArray(doc.chunks) ? doc.chunks : [];
      $("document-heading").textContent = doc.title || doc.sourceUri || doc.documentId;
      $("document-metadata").replaceChildren(
        ...METADATA.filter(([key]) => doc[key] !== null && doc[key] !== undefined).flatMap(([key, label]) => [
          el("dt", {}, label),
          el("dd", { "data-field": key }, String(doc[key])),
        ]),
      );
      $("chunks-body").replaceChildren(
        ...chunks.map((chunk, index) =>
          el(
            "tr",
            { "data-chunk-id": chunk.chunkId, "data-start-byte": chunk.startByte, "data-end-byte": chunk.endByte },
            el("td", { class: "number" }, String(index + 1)),
            el("td", { class: "id" }, chunk.chunkId),
            el("td", { class: "number" }, String(chunk.startByte)),
            el("td", { class: "number" }, String(chunk.endByte)),
            el("td", { class: "number" }, String(chunk.endByte - chunk.startByte)),
          ),
        ),
      );
      $("document-detail").dataset.documentId = doc.documentId;
      show("document-detail", true);
      const limits = Array.isArray(doc.limitsReached) ? doc.limitsReached : [];
      const held = limits.map((limit) => `${limit.name}: held to ${limit.value}`).join(", ");
      $("documents-status").textContent = held
        ? `${plural(chunks.length, "chunk", "chunks")} listed; a limit was reached (${held}).`
        : `${plural(chunks.length, "chunk", "chunks")} in this document.`;
    } catch (error) {
      $("documents-status").textContent = "The server could not be reached.";
    }
  }

  // --- views ---------------------------------------------------------------------------

  function view(name) {
    const documents = name === "documents";
    show("ask-view", !documents);
    show("documents-view", documents);
    $("show-ask").setAttribute("aria-pressed", String(!documents));
    $("show-documents").setAttribute("aria-pressed", String(documents));
    if (documents && !documentsLoaded) loadDocuments();
  }

  $("ask-form").addEventListener("submit", ask);
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) $("ask-form").requestSubmit();
  });
  $("stop-button").addEventListener("click", () => controller?.abort());
  $("clear-history").addEventListener("click", () => {
    history.length = 0;
    updateHistory();
  });
  $("show-ask").addEventListener("click", () => view("ask"));
  $("show-documents").addEventListener("click", () => view("documents"));
  $("load-documents").addEventListener("click", loadDocuments);
  document.body.dataset.ready = "true";
})();
