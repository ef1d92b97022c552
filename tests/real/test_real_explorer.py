"""The explorer page answering with the real model: a real headless Chromium asks, the page shows
verified citations at their stored bytes or a coded refusal (withdrawing any provisional text).

The page and the API are ``create_app``'s, under uvicorn on a loopback port, against the
suite's Neo4j with chapter I of Alice ingested; the chat is the suite's recorder (live and
recording with ``make test-real``, replayed in ``make test``). The browser, the server
and the helpers are those of ``tests/e2e/test_explorer.py``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from graphrag_orm import GraphRag, GraphRagOptions
from graphrag_orm.chat import Recorder
from graphrag_orm.chat.endpoint import ChatEndpoint
from graphrag_orm.chunking import ChunkerOptions
from graphrag_orm.codes import RefusalReason
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import RunStatus
from graphrag_orm.server import ServerOptions
from graphrag_orm.sources import Sources
from graphrag_orm.store import ConnectionSettings, Store
from tests.conftest import install_toolkit_schema
from tests.database import wipe_data
from tests.e2e.test_explorer import (
    HAS_BROWSER,
    NO_BROWSER,
    ask,
    chromium,
    console_errors,
    keep_evidence,
    running_app,
    stored_span,
    text_of,
    wait_for_outcome,
)
from tests.real.conftest import MODEL, live_url
from tests.real.test_real_model import ANSWERS, CHAPTER, NOVEL_QUESTIONS, RETRIEVAL, WITHDRAWN_QUESTION

#: A live answer on two shared cores takes minutes; a replay, a moment.
ANSWER_WAIT_SECONDS = 900
QUESTIONS = (NOVEL_QUESTIONS[0], WITHDRAWN_QUESTION)


@pytest_asyncio.fixture
async def page(
    recorder: Recorder,
    store: Store,
    neo4j_settings: ConnectionSettings,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> AsyncIterator[WebDriver]:
    if not HAS_BROWSER:
        pytest.skip(NO_BROWSER)
    await install_toolkit_schema(store)
    await wipe_data(store)
    url = live_url()
    inner = None
    if url is not None:
        from graphrag_orm.chat.openai import OpenAIChat

        endpoint = ChatEndpoint(structured_output="json_object", token_limit="both", timeout_seconds=900)
        inner = OpenAIChat(MODEL, base_url=url, endpoint=endpoint)
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=recorder.chat(inner),
        options=GraphRagOptions(
            answers=ANSWERS, chunking=ChunkerOptions(max_utf8_bytes=700, overlap_paragraphs=0), retrieval=RETRIEVAL
        ),
    )
    await rag.connect(neo4j_settings, neomodel=False)
    try:
        receipt = await rag.ingestion.ingest([Sources.file(CHAPTER, uri="novel:alice-chapter-1")])
    finally:
        await rag.close()
    assert receipt.status == RunStatus.COMPLETED and receipt.failed == 0
    with contextlib.ExitStack() as stack:
        patch = stack.enter_context(pytest.MonkeyPatch.context())
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            patch.delenv(name, raising=False)
        patch.setenv("NO_PROXY", "127.0.0.1,localhost")
        address = stack.enter_context(running_app(rag, neo4j_settings, ServerOptions(retrieval=RETRIEVAL)))
        driver = stack.enter_context(chromium(tmp_path))
        driver.get(address + "/")
        WebDriverWait(driver, 10).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
        driver.get_log("browser")
        failed_before = request.session.testsfailed
        yield driver
        if request.session.testsfailed > failed_before:
            keep_evidence(driver, tmp_path)
    if inner is not None:
        await inner.aclose()
    await wipe_data(store)


@pytest.mark.parametrize("question", QUESTIONS)
async def test_the_page_shows_verified_citations_or_a_coded_refusal(
    page: WebDriver, store: Store, question: str
) -> None:
    ask(page, question)
    outcome = wait_for_outcome(page, ANSWER_WAIT_SECONDS)
    assert outcome in ("verified", "refused"), page.find_element(By.ID, "stream").text
    provisional = page.find_element(By.ID, "provisional")
    if outcome == "verified":
        assert page.find_element(By.ID, "answer-text").text
        entries = page.find_elements(By.CSS_SELECTOR, "#citations > li[data-citation]")
        assert entries, "a verified answer shows its citations"
        for entry in entries:
            assert entry.get_attribute("data-highlighted") == "true"
            mark = entry.find_element(By.CSS_SELECTOR, "mark[data-citation-mark]")
            start = int(mark.get_attribute("data-start-byte") or -1)
            end = int(mark.get_attribute("data-end-byte") or -1)
            chunk_id = entry.get_attribute("data-chunk-id") or ""
            assert text_of(mark) == await stored_span(store, chunk_id, start, end), "the mark is the stored bytes"
        assert not provisional.is_displayed()
    else:
        assert page.find_element(By.ID, "refusal-reason").text in set(RefusalReason)
        assert not page.find_element(By.ID, "verified").is_displayed()
        if provisional.is_displayed():  # text was streamed: the page withdraws it, visibly
            assert provisional.get_attribute("data-state") == "withdrawn"
            assert page.find_element(By.CSS_SELECTOR, "#provisional del[data-withdrawn]")
    assert page.find_elements(By.CSS_SELECTOR, "#evidence > li[data-chunk-id]"), "the evidence is listed"
    assert console_errors(page) == []
