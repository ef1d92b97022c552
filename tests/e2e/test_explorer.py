"""The explorer page in a real headless Chromium, served by ``create_app`` over real HTTP.

One uvicorn server on a free loopback port serves the page and the API against the
suite's Neo4j, with three documents ingested (one with accents, a three-byte and a
four-byte character before the words it cites). Answers come from scripted replies of
the loopback OpenAI-compatible server, streamed in small delayed pieces so the page's
provisional text can be seen before the verdict. Every highlighted citation is checked
against the chunk text read from Neo4j with Cypher and cut in Python by UTF-8 bytes.

Chromium and its driver are Debian's (/usr/bin/chromium, /usr/bin/chromedriver; CI
installs them); Selenium is given both paths, so Selenium Manager never runs and
nothing is downloaded. On a failure the test saves a screenshot and the browser's
console log in its ``tmp_path`` and prints their paths.

Set ``GRAPHRAG_EXPLORER_SCREENSHOT`` to a path to save the picture of a verified answer
that docs/images/explorer.png shows (1280 pixels wide).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from graphrag_orm import GraphRag, GraphRagOptions
from graphrag_orm.chat import OpenAIChat
from graphrag_orm.chat.evidence_block import parse_evidence, parse_question
from graphrag_orm.chunking import ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.ingestion import RunStatus
from graphrag_orm.retrieval import RetrievalOptions
from graphrag_orm.server import ServerOptions, create_app
from graphrag_orm.server.explorer import explorer_router
from graphrag_orm.sources import SourceMetadata, Sources
from graphrag_orm.store import ConnectionSettings, Store
from tests.conftest import install_toolkit_schema
from tests.database import wipe_data
from tests.support.openai_server import OpenAIServer, running_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

HAS_BROWSER = CHROMIUM.is_file() and CHROMEDRIVER.is_file()
NO_BROWSER = "needs Debian's chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver); CI installs them"

# Paragraphs of 90 to 200 bytes under a 200-byte budget: one paragraph per chunk.
BIKES = (
    "The BC-310 brake caliper is supplied by Northwind Components of Leeds, under a contract signed in 2024.\n\n"
    "Each caliper is tested at 40 bar before it leaves the factory; the test takes about nine minutes.\n"
)
CAFE = (
    "Le café « Chez Zoë » à Lyon ☕ opens at seven, and Zoë’s riders tested the BC-310 caliper on the Croix-Rousse climb.\n\n"
    "Au café, «Les Pédales» 🚲🚴 meet on Sundays: Zoë’s club rides the BC-310 in every season, rain or shine.\n"
)
# Markup in stored text and titles is text: the page must show it, never run or render it.
TYRES = (
    'The Trail 5 rides on 2.4 inch <b>tyres</b> <img src="x" onerror="document.body.dataset.owned = 1">; '
    "the pressure depends on the rider's weight.\n"
)
TYRES_TITLE = "Tyres <i>and</i> trails"
# Untitled, with a long URI and the source's hard line breaks (a wrapped plain-text file).
SURVEY_URI = "field-notes/2024/north-shore/tidepool-survey/appendix-b.txt"
SURVEY = "The survey counted\nforty-one anemones\nin the upper pools.\n\nA second count in May\nfound thirty-eight.\n"

SOURCES = (
    Sources.text("bikes", BIKES, metadata=SourceMetadata(title="Brake calipers")),
    Sources.text("café", CAFE, metadata=SourceMetadata(title="Le café des Pédales")),
    Sources.text("tyres", TYRES, metadata=SourceMetadata(title=TYRES_TITLE)),
    Sources.text(SURVEY_URI, SURVEY),
)
#: The server's question bound in these tests (the retrieval's, not the default): the box must hold this many.
QUESTION_BOUND = 300

CITED_QUESTION = "Who supplies the BC-310 caliper, and who rides it on Sundays?"
CITED_ANSWER = "Northwind Components of Leeds supplies it; the club «Les Pédales» rides it on Sundays."
CITED_QUOTES = ("supplied by Northwind Components of Leeds", "Zoë’s club rides the BC-310 in every season")
PICTURE_QUESTION = "Who supplies the BC-310 caliper, and where was it tested?"
PICTURE_QUOTES = ("supplied by Northwind Components of Leeds", "Zoë’s riders tested the BC-310 caliper")
WITHDRAWN_QUESTION = "Who painted the BC-310 caliper?"
WITHDRAWN_ANSWER = "The calipers are painted by hand in Leeds before they are tested."
UNANSWERABLE_QUESTION = "What is the capital of Mars?"
FAILING_QUESTION = "How long does the caliper test take?"
SURVEY_QUESTION = "How many anemones did the tidepool survey count?"
SURVEY_QUOTE = "forty-one anemones\nin the upper pools"
# The model copies the source's hard line breaks; the page reflows them.
SURVEY_ANSWER = "The survey counted\nforty-one anemones\nin the upper pools.\n\nA second count\nfound thirty-eight."


# --- scripted model replies ------------------------------------------------------------


def reply_to(body: dict[str, Any]) -> str:
    """The loopback model's reply: cite, cite a quote that is nowhere, or decline, by question."""
    prompt = body["messages"][-1]["content"]
    question = parse_question(prompt)
    items = parse_evidence(prompt)

    def cite(quote: str) -> dict[str, str]:
        chunk_id = next((chunk for chunk, text in items if quote in text), None)
        assert chunk_id is not None, f"no evidence item holds {quote!r}"
        return {"chunkId": chunk_id, "quote": quote}

    if question == CITED_QUESTION:
        return json.dumps({"answer": CITED_ANSWER, "citations": [cite(quote) for quote in CITED_QUOTES]})
    if question == PICTURE_QUESTION:
        answer = "Northwind Components of Leeds supplies it, and Zoë’s riders tested it on the Croix-Rousse climb."
        return json.dumps({"answer": answer, "citations": [cite(quote) for quote in PICTURE_QUOTES]})
    if question == SURVEY_QUESTION:
        return json.dumps({"answer": SURVEY_ANSWER, "citations": [cite(SURVEY_QUOTE)]})
    if question == WITHDRAWN_QUESTION:
        chunk_id = items[0][0]
        citation = {"chunkId": chunk_id, "quote": "painted by hand in Leeds"}
        return json.dumps({"answer": WITHDRAWN_ANSWER, "citations": [citation]})
    return json.dumps({"insufficient": "the evidence says nothing about this"})


# --- the server and the browser --------------------------------------------------------


@dataclass
class Explorer:
    url: str
    driver: WebDriver
    model: OpenAIServer


def free_socket() -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    return listener


@contextlib.contextmanager
def running_app(rag: GraphRag, settings: ConnectionSettings, options: ServerOptions | None = None) -> Iterator[str]:
    """``create_app(rag)`` under uvicorn in a thread of its own (its own event loop); yields its URL."""
    listener = free_socket()
    port = listener.getsockname()[1]
    options = options or ServerOptions(retrieval=RetrievalOptions(max_question_chars=QUESTION_BOUND))
    server = uvicorn.Server(uvicorn.Config(create_app(rag, options), log_level="warning"))

    async def serve() -> None:
        # The driver lives on the loop that opened it: the server's.
        await rag.connect(settings, neomodel=False)
        try:
            await server.serve(sockets=[listener])
        finally:
            await rag.close()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), name="explorer-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the explorer's server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        listener.close()


@contextlib.contextmanager
def chromium(downloads: Path) -> Iterator[WebDriver]:
    if not HAS_BROWSER:
        pytest.skip(NO_BROWSER)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1000",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
        "--no-proxy-server",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: Selenium Manager is skipped, so nothing is ever downloaded.
    service = Service(executable_path=str(CHROMEDRIVER), log_output=str(downloads / "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest_asyncio.fixture(scope="module")
async def explorer(
    store: Store, neo4j_settings: ConnectionSettings, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Explorer]:
    if not HAS_BROWSER:
        pytest.skip(NO_BROWSER)
    await install_toolkit_schema(store)
    await wipe_data(store)
    with contextlib.ExitStack() as stack:
        patch = stack.enter_context(pytest.MonkeyPatch.context())
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            patch.delenv(name, raising=False)
        patch.setenv("NO_PROXY", "127.0.0.1,localhost")
        model = stack.enter_context(contextlib.contextmanager(running_server)())
        model.chat_responder = reply_to
        model.stream_piece = 6
        model.stream_delay = 0.03
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=OpenAIChat("loopback-model", base_url=model.url, api_key="test-key"),
            options=GraphRagOptions(chunking=ChunkerOptions(max_utf8_bytes=200, overlap_paragraphs=0)),
        )
        await ingest(rag, neo4j_settings)
        url = stack.enter_context(running_app(rag, neo4j_settings))
        driver = stack.enter_context(chromium(tmp_path_factory.mktemp("chromium")))
        yield Explorer(url, driver, model)
    await wipe_data(store)


async def ingest(rag: GraphRag, settings: ConnectionSettings) -> None:
    """Ingest the documents through a connection of this loop, closed before the server opens its own."""
    await rag.connect(settings, neomodel=False)
    try:
        receipt = await rag.ingestion.ingest(list(SOURCES))
    finally:
        await rag.close()
    assert receipt.status == RunStatus.COMPLETED and receipt.chunks_written == 6, receipt


@pytest.fixture
def page(explorer: Explorer, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[WebDriver]:
    """The explorer freshly loaded; when the test fails, a screenshot and the console log in ``tmp_path``."""
    driver = explorer.driver
    explorer.model.faults.clear()
    driver.get(explorer.url + "/")
    WebDriverWait(driver, 10).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    driver.get_log("browser")  # start each test with an empty console log
    failed_before = request.session.testsfailed
    yield driver
    # The call's report is counted before fixtures are torn down.
    if request.session.testsfailed > failed_before:
        keep_evidence(driver, tmp_path)


def keep_evidence(driver: WebDriver, folder: Path) -> None:
    screenshot = folder / "explorer-failure.png"
    console = folder / "explorer-console.log"
    driver.save_screenshot(str(screenshot))
    entries = driver.get_log("browser")
    console.write_text("".join(f"{entry['level']} {entry['message']}\n" for entry in entries), encoding="utf-8")
    print(f"explorer failure: screenshot {screenshot}")
    print(f"explorer failure: browser console log {console}")


# --- helpers ---------------------------------------------------------------------------


def ask(driver: WebDriver, question: str) -> None:
    box = driver.find_element(By.ID, "question")
    box.clear()
    box.send_keys(question)
    driver.find_element(By.ID, "ask-button").click()


def state(driver: WebDriver) -> str:
    return driver.find_element(By.ID, "stream").get_attribute("data-state") or ""


def wait_for_outcome(driver: WebDriver, timeout: float = 30) -> str:
    WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: state(d) in {"verified", "refused", "error"})
    return state(driver)


def text_of(element: WebElement) -> str:
    return element.get_attribute("textContent") or ""


def watch_provisional(driver: WebDriver) -> str:
    """The provisional text once some has arrived while the stream is still open, and its label."""
    WebDriverWait(driver, 30, poll_frequency=0.02).until(
        lambda d: state(d) != "asking" and text_of(d.find_element(By.ID, "provisional-text"))
    )
    assert state(driver) == "streaming", "the verdict arrived before any provisional text was seen"
    provisional = driver.find_element(By.ID, "provisional")
    assert provisional.is_displayed() and provisional.get_attribute("data-state") == "streaming"
    assert "Provisional" in provisional.find_element(By.ID, "provisional-label").text
    return text_of(driver.find_element(By.ID, "provisional-text"))


def console_errors(driver: WebDriver) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


async def stored_span(store: Store, chunk_id: str, start_byte: int, end_byte: int) -> str:
    """The stored text of ``[start_byte, end_byte)``, read with Cypher and cut by UTF-8 bytes in Python."""
    rows = (
        await store.read(
            "MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.startByte AS startByte, c.endByte AS endByte",
            {"id": chunk_id},
        )
    ).records
    assert len(rows) == 1, f"chunk {chunk_id} is not stored"
    text, chunk_start, chunk_end = rows[0]["text"], rows[0]["startByte"], rows[0]["endByte"]
    assert chunk_start <= start_byte <= end_byte <= chunk_end
    return text.encode()[start_byte - chunk_start : end_byte - chunk_start].decode()


def save_full_page(driver: WebDriver, path: Path) -> None:
    """The whole page at the window's width (Chromium's DevTools screenshot beyond the viewport)."""
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    path.write_bytes(base64.b64decode(shot["data"]))


# --- the tests -------------------------------------------------------------------------


def test_the_page_names_the_api_and_allows_nothing_from_another_origin() -> None:
    app = FastAPI()
    app.include_router(explorer_router("/api/v1", 4_000))
    with TestClient(app) as client:
        page = client.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert '<meta name="graphrag-api" content="/api/v1">' in page.text
        assert 'maxlength="4000"' in page.text
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy
        assert "unsafe-inline" not in policy
        bodies = [page.text]
        for name, media_type in (("explorer.js", "text/javascript"), ("explorer.css", "text/css")):
            asset = client.get(f"/explorer/{name}")
            assert asset.status_code == 200 and asset.headers["content-type"].startswith(media_type)
            assert asset.headers["x-content-type-options"] == "nosniff"
            bodies.append(asset.text)
        assert client.get("/explorer/index.html").status_code == 404
        assert client.get("/explorer/..%2Fexplorer.py").status_code == 404
    # Nothing is fetched from anywhere else, and the script never parses markup.
    assert not any("http://" in body or "https://" in body or "//cdn" in body for body in bodies)
    script = bodies[1]
    assert not any(sink in script for sink in (".innerHTML", ".outerHTML", "insertAdjacentHTML", "document.write"))
    with pytest.raises(ConfigurationError) as refused:
        explorer_router('/api"><script>', 4_000)
    assert refused.value.code == "invalid-option"


async def test_a_verified_answer_highlights_each_citation_at_its_stored_bytes(page: WebDriver, store: Store) -> None:
    ask(page, CITED_QUESTION)
    provisional = watch_provisional(page)
    assert CITED_ANSWER.startswith(provisional)

    assert wait_for_outcome(page) == "verified"
    assert not page.find_element(By.ID, "provisional").is_displayed()
    assert page.find_element(By.ID, "answer-text").text == CITED_ANSWER
    entries = page.find_elements(By.CSS_SELECTOR, "#citations > li[data-citation]")
    assert len(entries) == len(CITED_QUOTES)
    for entry, quote in zip(entries, CITED_QUOTES, strict=True):
        assert entry.get_attribute("data-highlighted") == "true"
        mark = entry.find_element(By.CSS_SELECTOR, "mark[data-citation-mark]")
        start, end = int(mark.get_attribute("data-start-byte") or -1), int(mark.get_attribute("data-end-byte") or -1)
        chunk_id = entry.get_attribute("data-chunk-id") or ""
        assert text_of(mark) == await stored_span(store, chunk_id, start, end) == quote
        # The mark sits inside the whole chunk text, so what surrounds it is the chunk's too.
        chunk = entry.find_element(By.CSS_SELECTOR, "blockquote[data-chunk-id]")
        rows = (await store.read("MATCH (c:Chunk {id: $id}) RETURN c.text AS text", {"id": chunk_id})).records
        assert text_of(chunk) == rows[0]["text"]
    cafe = entries[1]
    assert "Le café des Pédales" in cafe.text and "text:café" in cafe.text
    assert "🚲🚴" in text_of(cafe.find_element(By.CSS_SELECTOR, "blockquote"))

    items = page.find_elements(By.CSS_SELECTOR, "#evidence > li[data-chunk-id]")
    assert items and all(item.find_elements(By.CSS_SELECTOR, "tr[data-route]") for item in items)
    routes = {
        row.get_attribute("data-route") for row in page.find_elements(By.CSS_SELECTOR, "#evidence tr[data-route]")
    }
    assert {"Vector", "FullText"} <= routes
    assert page.find_elements(By.CSS_SELECTOR, "#limits > li")
    assert console_errors(page) == []

    picture = os.environ.get("GRAPHRAG_EXPLORER_SCREENSHOT")
    if picture:
        page.refresh()
        WebDriverWait(page, 10).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
        ask(page, PICTURE_QUESTION)
        assert wait_for_outcome(page) == "verified"
        save_full_page(page, Path(picture))


async def test_a_refusal_withdraws_the_provisional_text_visibly(page: WebDriver) -> None:
    ask(page, WITHDRAWN_QUESTION)
    provisional = watch_provisional(page)
    assert WITHDRAWN_ANSWER.startswith(provisional)

    assert wait_for_outcome(page) == "refused"
    assert page.find_element(By.ID, "refusal-reason").text == "citation-not-found"
    assert "not in the stored text" in page.find_element(By.ID, "refusal-explanation").text
    panel = page.find_element(By.ID, "provisional")
    assert panel.is_displayed() and panel.get_attribute("data-state") == "withdrawn"
    assert text_of(panel.find_element(By.CSS_SELECTOR, "del[data-withdrawn]")) == WITHDRAWN_ANSWER
    assert "Withdrawn" in page.find_element(By.ID, "withdrawn-note").text
    assert not page.find_element(By.ID, "verified").is_displayed()


async def test_an_unanswerable_question_is_refused_in_words(page: WebDriver) -> None:
    ask(page, UNANSWERABLE_QUESTION)
    assert wait_for_outcome(page) == "refused"
    assert page.find_element(By.ID, "refusal-reason").text == "model-declined"
    assert "does not answer the question" in page.find_element(By.ID, "refusal-explanation").text
    assert not page.find_element(By.ID, "provisional").is_displayed()
    items = page.find_elements(By.CSS_SELECTOR, "#evidence > li[data-chunk-id]")
    assert len(items) == 6  # every passage, the one with markup in its text and title included
    assert any(TYRES.strip() == text_of(item.find_element(By.CSS_SELECTOR, ".chunk-text")).strip() for item in items)
    assert any(TYRES_TITLE in text_of(item) for item in items)
    assert page.find_elements(By.CSS_SELECTOR, "#evidence b, #evidence i, #evidence img") == []
    assert page.find_element(By.TAG_NAME, "body").get_attribute("data-owned") is None


async def test_a_model_failure_is_shown_by_its_code(page: WebDriver, explorer: Explorer) -> None:
    explorer.model.fail(500)
    ask(page, FAILING_QUESTION)
    assert wait_for_outcome(page) == "error"
    assert page.find_element(By.ID, "error-code").text == "model-failed"
    assert "Nothing was verified" in page.find_element(By.ID, "error-explanation").text


async def test_a_question_refused_before_any_work_shows_the_problem_code(page: WebDriver) -> None:
    # Past the server's 2,000-character bound; typed in by script, the page sends it as it is.
    page.execute_script("document.getElementById('question').value = 'why '.repeat(600);")
    page.find_element(By.ID, "ask-button").click()
    assert wait_for_outcome(page) == "error"
    assert page.find_element(By.ID, "error-code").text == "question-too-long"


async def test_the_documents_view_lists_documents_and_a_documents_chunk_spans(page: WebDriver, store: Store) -> None:
    page.find_element(By.ID, "show-documents").click()
    WebDriverWait(page, 10).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#documents-body tr")) == 4)
    assert not page.find_element(By.ID, "ask-view").is_displayed()
    rows = {
        row.get_attribute("data-document-id"): row for row in page.find_elements(By.CSS_SELECTOR, "#documents-body tr")
    }
    stored = (await store.read("MATCH (d:Document) RETURN d.id AS id, d.sourceUri AS uri, d.title AS title")).records
    assert set(rows) == {row["id"] for row in stored}
    cafe = next(row for row in stored if row["uri"] == "text:café")
    assert "Le café des Pédales" in rows[cafe["id"]].text
    tyres = next(row for row in stored if row["uri"] == "text:tyres")
    assert TYRES_TITLE in rows[tyres["id"]].text
    assert page.find_elements(By.CSS_SELECTOR, "#documents i") == []

    rows[cafe["id"]].find_element(By.TAG_NAME, "button").click()
    WebDriverWait(page, 10).until(
        lambda d: d.find_element(By.ID, "document-detail").get_attribute("data-document-id") == cafe["id"]
    )
    spans = [
        (
            row.get_attribute("data-chunk-id"),
            int(row.get_attribute("data-start-byte") or -1),
            int(row.get_attribute("data-end-byte") or -1),
        )
        for row in page.find_elements(By.CSS_SELECTOR, "#chunks-body tr")
    ]
    chunks = (
        await store.read(
            "MATCH (c:Chunk {documentId: $id}) RETURN c.id AS id, c.startByte AS s, c.endByte AS e ORDER BY c.order",
            {"id": cafe["id"]},
        )
    ).records
    assert spans == [(row["id"], row["s"], row["e"]) for row in chunks]
    assert len(spans) == 2
    assert page.find_element(By.CSS_SELECTOR, '#document-metadata dd[data-field="utf8Length"]').text == str(
        len(CAFE.encode())
    )


def line_breaks(driver: WebDriver, element: WebElement) -> list[str]:
    """The character before each place the browser wrapped ``element``'s text to a new line."""
    found: list[str] = driver.execute_script(
        """
        const walker = document.createTreeWalker(arguments[0], NodeFilter.SHOW_TEXT);
        const before = [];
        let top = null, last = null;
        while (walker.nextNode()) {
          const node = walker.currentNode;
          for (let i = 0; i < node.data.length; i++) {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const box = range.getBoundingClientRect();
            if (box.width === 0 && box.height === 0) continue;
            if (top !== null && box.top > top + 2) before.push(last);
            top = box.top;
            last = node.data[i];
          }
        }
        return before;
        """,
        element,
    )
    return found


def test_the_question_box_holds_the_servers_bound_and_no_more(page: WebDriver) -> None:
    box = page.find_element(By.ID, "question")
    assert box.get_attribute("maxlength") == str(QUESTION_BOUND)
    box.clear()
    box.send_keys("q" * (QUESTION_BOUND + 40))
    assert len(box.get_attribute("value") or "") == QUESTION_BOUND


async def test_an_untitled_source_is_shown_once_wraps_at_separators_and_the_answer_is_reflowed(
    page: WebDriver, store: Store
) -> None:
    ask(page, SURVEY_QUESTION)
    assert wait_for_outcome(page) == "verified"
    # Hard line breaks in the answer become spaces; the blank line stays a paragraph break.
    answer = page.find_element(By.ID, "answer-text")
    assert [p.text for p in answer.find_elements(By.TAG_NAME, "p")] == [
        "The survey counted forty-one anemones in the upper pools.",
        "A second count found thirty-eight.",
    ]
    assert "\n" not in text_of(answer)
    # The quote keeps its exact stored text, line break included.
    entry = page.find_element(By.CSS_SELECTOR, "#citations > li[data-citation]")
    mark = entry.find_element(By.CSS_SELECTOR, "mark[data-citation-mark]")
    start, end = int(mark.get_attribute("data-start-byte") or -1), int(mark.get_attribute("data-end-byte") or -1)
    assert (
        text_of(mark)
        == SURVEY_QUOTE
        == await stored_span(store, entry.get_attribute("data-chunk-id") or "", start, end)
    )
    uri = f"text:{SURVEY_URI}"
    item = next(li for li in page.find_elements(By.CSS_SELECTOR, "#evidence > li[data-chunk-id]") if uri in text_of(li))
    for shown in (entry, item):
        assert text_of(shown).count(uri) == 1, text_of(shown)
        assert shown.find_elements(By.CSS_SELECTOR, ".source") == []
    # In a narrow column the URI wraps only after a separator, never inside a word.
    page.execute_script("arguments[0].style.width = '11em'", item)
    breaks = line_breaks(page, item.find_element(By.CSS_SELECTOR, ".uri"))
    assert breaks and all(before in "/:.-_?&=#" for before in breaks), breaks
    assert console_errors(page) == []
