"""The explorer page in a real headless Chromium, one tenant per visitor (issue 31, item 4).

``create_app`` serves the other tenant's facade (a server started for one tenant), and
the application's ``tenant_for`` reads the visitor's ``tenant`` cookie, the way an
application reads its session: a router that ignored ``tenant_for`` would show the visitor
the other tenant's documents. The page is driven as a user drives it (asking each probe,
listing the documents, opening each one) and after every step the whole page, its text
and its markup with every attribute, is scanned for any byte of the other tenant's text,
ids or counts (:class:`~tests.leaks.corpus.Leaks`). The same browser with the other
tenant's cookie sees that tenant's own secret, so the scan can fail; without a cookie the
page shows the server's ``tenant-required`` and nothing else.

Chromium and its driver are Debian's (``tests/e2e/test_explorer.py`` says how).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from fastapi import Request
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from graphrag_orm.server import ServerOptions, create_app
from graphrag_orm.store import Store
from graphrag_orm.store.neomodel import attach_neomodel
from tests.e2e.test_explorer import HAS_BROWSER, NO_BROWSER, ask, chromium, wait_for_outcome
from tests.e2e.test_server_http import serving
from tests.leaks.corpus import BY_SECRET, DOCUMENTS, OTHER, OWN, PROBES, SECRETS, VAULT, CarryingChat, Leaks
from tests.support.tenancy import tenanted_rag

pytestmark = pytest.mark.skipif(not HAS_BROWSER, reason=NO_BROWSER)

COOKIE = "tenant"


def tenant_for(request: Request) -> str | None:
    """The application's choice: the visitor's cookie (None, no cookie: refused by the router)."""
    return request.cookies.get(COOKIE)


@pytest_asyncio.fixture(scope="module")
async def served(
    leaks: Leaks, store: Store, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[str, WebDriver]]:
    """The other tenant's server, its requests bound by cookie, and one browser."""
    app = create_app(tenanted_rag(tenant=OTHER, chat=CarryingChat()), ServerOptions(tenant_for=tenant_for))
    try:
        with serving(app) as url, chromium(tmp_path_factory.mktemp("chromium-tenants")) as driver:
            yield url, driver
    finally:
        await attach_neomodel(store.driver, store.database)  # the app's lifespan pointed neomodel at its own driver


def visit(url: str, driver: WebDriver, tenant: str | None) -> WebDriver:
    """The page loaded afresh as a visitor of ``tenant`` (None: without the cookie)."""
    driver.get(url + "/")
    driver.delete_all_cookies()
    if tenant is not None:
        driver.add_cookie({"name": COOKIE, "value": tenant, "path": "/"})
    driver.get(url + "/")
    WebDriverWait(driver, 10).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    return driver


def whole_page(driver: WebDriver) -> str:
    """What the visitor could read: the rendered text and the markup with every attribute."""
    text = driver.execute_script("return document.body.innerText") or ""
    markup = driver.execute_script("return document.documentElement.outerHTML") or ""
    return f"{text}\n{markup}"


def answer_text(driver: WebDriver) -> str:
    return driver.execute_script("return document.getElementById('stream').textContent") or ""


def listed_documents(driver: WebDriver, expected: int) -> list[str]:
    driver.find_element(By.ID, "show-documents").click()
    WebDriverWait(driver, 10).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#documents-body tr")) == expected)
    rows = driver.find_elements(By.CSS_SELECTOR, "#documents-body tr")
    return [row.get_attribute("data-document-id") or "" for row in rows]


def open_document(driver: WebDriver, document: str) -> None:
    row = driver.find_element(By.CSS_SELECTOR, f'#documents-body tr[data-document-id="{document}"]')
    row.find_element(By.TAG_NAME, "button").click()
    WebDriverWait(driver, 10).until(
        lambda d: (
            d.find_element(By.ID, "document-detail").get_attribute("data-document-id") == document
            and d.find_elements(By.CSS_SELECTOR, "#chunks-body tr")
        )
    )


def test_a_visitor_of_one_tenant_reads_nothing_of_the_other_on_the_page(
    served: tuple[str, WebDriver], leaks: Leaks
) -> None:
    url, driver = served
    page = visit(url, driver, OWN)
    leaks.assert_none(whole_page(page))
    for probe in PROBES:
        ask(page, probe)
        outcome = wait_for_outcome(page)
        assert outcome in {"verified", "refused"}, outcome
        if probe == VAULT:
            assert outcome == "verified" and SECRETS[OWN] in answer_text(page)
        leaks.assert_none(whole_page(page), asked=[probe])
    ids = listed_documents(page, DOCUMENTS[OWN])
    assert set(ids) <= leaks.own_ids
    leaks.assert_none(whole_page(page))
    for document in ids:
        open_document(page, document)
        leaks.assert_none(whole_page(page))


def test_the_same_page_with_the_other_tenants_cookie_shows_that_tenants_own(
    served: tuple[str, WebDriver], leaks: Leaks
) -> None:
    # The scan above can fail: the same page, as the other tenant's visitor, shows its secret.
    url, driver = served
    page = visit(url, driver, OTHER)
    ask(page, BY_SECRET)
    assert wait_for_outcome(page) == "verified"
    assert leaks.found_in(whole_page(page), asked=[BY_SECRET]) != []
    ids = listed_documents(page, DOCUMENTS[OTHER])
    assert set(ids) == set(leaks.other_documents)


def test_a_visitor_without_a_tenant_is_refused_and_shown_nothing(served: tuple[str, WebDriver], leaks: Leaks) -> None:
    url, driver = served
    page = visit(url, driver, None)
    ask(page, VAULT)
    assert wait_for_outcome(page) == "error"
    assert page.find_element(By.ID, "error-code").text == "tenant-required"
    leaks.assert_none(whole_page(page), asked=[VAULT])
    assert SECRETS[OWN] not in whole_page(page)
