"""``cce corpus serve``: ``GET /docs?service=`` over loopback, bearer token required, in the reference's format.

The route is tested in-process (auth before routing, the 500-character body
cut, the fenced ``q``, the exact JSON) and the command over a real loopback
socket: authenticated answers, 401 for a missing or wrong token, a hostile
or huge query, an oversized request head, an idle client that must not hold
up others, and the refusals at start (no token, a non-loopback ``--host``, a
broken store).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import cce_executable, run_cce

from cce_core.foundation.errors import CceError
from cce_core.knowledge.blend import LoadedKnowledge
from cce_core.knowledge.corpus_server import (
    BODY_CHAR_CAP,
    DEFAULT_PORT,
    MAX_HEAD_BYTES,
    QUERY_CHAR_CAP,
    TOKEN_ENV,
    CorpusApp,
    Request,
    body_snippet,
    fence_query_terms,
    loopback_host,
    parse_head,
    percent_decode,
    q_param,
    resolve_token,
    service_param,
)
from cce_core.knowledge.feed import parse_feed
from cce_core.knowledge.ingest import build_store
from cce_core.plugins.host import document_chunker_for

TOKEN = "s3cret-token"
CHECKOUT = {"id": "kn:checkout", "title": "Checkout service runbook",
            "body": "## Restart\n\nThe checkout service restarts cleanly; drain connections first.",
            "source": "handbook", "url": "https://example.test/checkout", "updated_at": "2026-02-01T10:00:00Z",
            "labels": ["checkout"]}
RETENTION = {"id": "kn:other", "title": "Data retention window",
             "body": "## Rule\n\nPurge inactive account records after ninety days.", "source": "handbook",
             "updated_at": "2026-01-01T00:00:00Z", "labels": ["privacy"]}
MIGRATION = {"id": "kn:migration", "title": "Database migration rollback",
             "body": "## Rollback\n\nA failed database migration is retried; replay the migration log, then re-run "
                     "the migration.", "source": "handbook", "updated_at": "2026-01-15T00:00:00Z",
             "labels": ["database"]}


def feed(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def app_for(*records: dict, top_k: int = 10) -> CorpusApp:
    text = feed(*records)
    store = build_store(parse_feed(text), text.encode(), 400, document_chunker_for("markdown"))
    return CorpusApp(LoadedKnowledge(store), TOKEN, top_k, 0.30)


def get(app: CorpusApp, target: str, auth: str | None = f"Bearer {TOKEN}", method: str = "GET"):
    return app.route(Request(method, target, (auth,) if auth is not None else ()))


def titles(response) -> list[str]:
    assert response.status == 200, response.body
    return [d["title"] for d in json.loads(response.body)["docs"]]


# --------------------------------------------------------------------------- the route


def test_an_authenticated_request_gets_the_services_docs_in_the_reference_shape() -> None:
    response = get(app_for(CHECKOUT, RETENTION), "/docs?service=checkout")
    assert response.status == 200
    body = json.loads(response.body)
    (doc,) = body["docs"]
    assert doc["title"] == "Checkout service runbook" and len(doc["id"]) == 16
    assert doc["body"] == ("# Checkout service runbook\n\n## Restart\n\nThe checkout service restarts cleanly; "
                           "drain connections first.")  # the whole section: it is under 500 characters
    assert response.body == json.dumps(body, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    assert response.body.startswith('{"docs":[{"body":')


def test_no_or_a_wrong_token_is_401_before_any_route() -> None:
    app = app_for(CHECKOUT)
    for auth in (None, "Bearer nope", f"Basic {TOKEN}", "Bearer", f"Bearer {TOKEN.upper()}", f"{TOKEN}", ""):
        response = get(app, "/docs?service=checkout", auth)
        assert (response.status, response.body) == (401, '{"error":"unauthorized"}'), auth
    assert get(app, "/secret", None).status == 401  # no route probing without the token
    assert get(app, "/docs?service=checkout", None, method="POST").status == 401
    two = app.route(Request("GET", "/docs?service=checkout", (f"Bearer {TOKEN}", f"Bearer {TOKEN}")))
    assert two.status == 401  # a second Authorization header is not a way around the check


def test_the_scheme_is_case_insensitive_and_the_token_is_compared_in_constant_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import hmac

    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def recording(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", recording)
    app = app_for(CHECKOUT)
    assert get(app, "/docs?service=checkout", f"bearer   {TOKEN} ").status == 200
    assert get(app, "/docs?service=checkout", "Bearer s3cret-tokem").status == 401
    assert compared == [(TOKEN.encode(), TOKEN.encode()), (b"s3cret-tokem", TOKEN.encode())]


def test_method_path_and_service_errors_after_the_token() -> None:
    app = app_for(CHECKOUT)
    assert (get(app, "/docs?service=x", method="POST").status, get(app, "/docs?service=x", method="HEAD").status) \
        == (405, 405)
    assert get(app, "/docs", method="DELETE").body == '{"error":"method not allowed"}'
    assert (get(app, "/").status, get(app, "/docsx?service=checkout").body) == (404, '{"error":"not found"}')
    for target in ("/docs", "/docs?service=", "/docs?service=+%20", "/docs?q=checkout", "/docs?service"):
        assert (get(app, target).status, get(app, target).body) == (400, '{"error":"missing service"}'), target


def test_top_k_caps_the_docs_and_an_empty_store_answers_no_docs() -> None:
    runbooks = [{"id": f"kn:{i}", "title": f"Service {i} runbook", "source": "handbook",
                 "body": f"## Restart\n\nService {i} runbook: restart cleanly.",
                 "updated_at": f"2026-02-0{i}T10:00:00Z"} for i in (1, 2, 3)]
    assert len(titles(get(app_for(*runbooks, top_k=2), "/docs?service=runbook"))) == 2
    empty = CorpusApp(LoadedKnowledge(build_store([], b"", 400, document_chunker_for("markdown"))), TOKEN)
    assert get(empty, "/docs?service=checkout").body == '{"docs":[]}'


def test_q_widens_the_search_beyond_the_service() -> None:
    app = app_for(CHECKOUT, MIGRATION)
    assert not any("migration" in t for t in titles(get(app, "/docs?service=checkout")))
    assert any("migration" in t for t in titles(get(app, "/docs?service=checkout&q=database+migration+rollback")))


# --------------------------------------------------------------------------- decoding and fencing


def test_form_decoding_of_service_and_q() -> None:
    assert service_param("/docs?service=check+out%2F2") == "check out/2"
    assert service_param("/docs?service=api%2Dgateway&q=timeout") == "api-gateway"
    assert service_param("/docs?service=&service=second") == "second"  # a blank one is passed over
    assert service_param("/docs") is None
    assert percent_decode("caf%C3%A9") == "café"
    assert [percent_decode(s) for s in ("a%2", "a%", "a%ZZb", "a%2F", "%ff")] == ["a%2", "a%", "a%ZZb", "a/", "\ufffd"]


def test_q_is_fenced_controls_out_capped_and_trimmed() -> None:
    assert q_param("/docs?service=checkout") is None
    assert q_param("/docs?service=checkout&q=%00%00") is None and q_param("/docs?service=c&q=+%09+") is None
    assert q_param("/docs?service=checkout&q=timeout+at+api%2Fgateway") == "timeout at api/gateway"
    fenced = q_param("/docs?service=checkout&q=a%0d%0aInjected:+1%00b%c2%85c")
    assert fenced == "a  Injected: 1 b c"
    assert len(q_param("/docs?service=checkout&q=" + "a" * 5_000) or "") == QUERY_CHAR_CAP == 500
    assert fence_query_terms("  é" * 400) == ("  é" * 400)[:500].strip()
    assert q_param("/docs?service=c&q=&q=second") is None  # the first q decides


def test_hostile_q_values_still_answer_well_formed_json() -> None:
    app = app_for(CHECKOUT, RETENTION)
    for q in ("%27%3B+DROP+TABLE+docs%3B+--", "%24%28rm+-rf+%2F%29", "a%0d%0aX-Injected:+evil",
              "..%2F..%2F..%2Fetc%2Fpasswd", "%00%00%00", "z" * 10_000, "%E2%80%AE%F0%9F%92%A3"):
        response = get(app, f"/docs?service=checkout&q={q}")
        assert response.status == 200 and isinstance(json.loads(response.body)["docs"], list), q
        assert "Injected" not in response.body and "passwd" not in response.body


# --------------------------------------------------------------------------- the 500-character body


def test_a_short_body_is_served_as_it_is() -> None:
    assert body_snippet("## Restart\n\nDrain first.") == "## Restart\n\nDrain first."
    assert body_snippet("x" * BODY_CHAR_CAP) == "x" * 500


def test_a_long_body_ends_on_the_last_whole_sentence_within_500_characters() -> None:
    body = "The gateway drains in-flight requests before it exits. " * 20
    snip = body_snippet(body)
    assert len(snip) <= 500 and snip.endswith(".") and body.startswith(snip)
    assert snip == ("The gateway drains in-flight requests before it exits. " * 9).rstrip()
    assert body_snippet("Pi is 3.14159 and more" + " words" * 100).endswith("\u2026")  # "3." is no sentence end


def test_without_a_sentence_end_the_cut_is_at_a_word_and_marked() -> None:
    body = "alpha beta gamma delta epsilon " * 30
    snip = body_snippet(body)
    assert len(snip) <= 500 and snip.endswith("\u2026")
    kept = snip.removesuffix("\u2026")
    assert body.startswith(kept) and body[len(kept)] == " "
    assert body_snippet("x" * 600) == "x" * 499 + "\u2026"
    assert body_snippet("é" * 550) == "é" * 499 + "\u2026"


# --------------------------------------------------------------------------- start-up checks


def test_only_loopback_addresses_may_be_bound() -> None:
    assert [loopback_host(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost")] == [
        "127.0.0.1", "127.0.0.2", "::1", "127.0.0.1"]
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.com", ""):
        with pytest.raises(CceError, match="loopback interface only"):
            loopback_host(host)


def test_the_token_comes_from_the_file_first_then_the_environment(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("  from-file\n", encoding="utf-8")
    assert resolve_token(token_file, {TOKEN_ENV: "from-env"}) == "from-file"
    assert resolve_token(None, {TOKEN_ENV: " from-env "}) == "from-env"
    for env in ({}, {TOKEN_ENV: "  \n"}):
        with pytest.raises(CceError, match=r"requires a bearer token.*set CCE_CORPUS_TOKEN or pass --token-file"):
            resolve_token(None, env)
    token_file.write_text("\n", encoding="utf-8")
    with pytest.raises(CceError, match="requires a bearer token"):
        resolve_token(token_file, {TOKEN_ENV: "ignored when a file is given"})
    with pytest.raises(CceError, match="could not read --token-file"):
        resolve_token(tmp_path / "absent", {})


def test_parse_head_reads_the_request_line_and_every_authorization() -> None:
    head = b"GET /docs?service=a HTTP/1.1\r\nHost: x\r\nauthorization: Bearer t\r\nAUTHORIZATION:  Bearer u \r\n"
    assert parse_head(head) == Request("GET", "/docs?service=a", ("Bearer t", "Bearer u"))
    assert parse_head(b"garbage") is None and parse_head(b"") is None


# --------------------------------------------------------------------------- over a real loopback socket


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    root = tmp_path_factory.mktemp("corpus")
    (root / "feed.jsonl").write_text(feed(CHECKOUT, RETENTION), encoding="utf-8")
    assert run_cce("knowledge", "index", root / "feed.jsonl", "--dir", root).returncode == 0
    (root / "token").write_text(TOKEN + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in (TOKEN_ENV, "CCE_DEBUG")}
    process = subprocess.Popen([cce_executable(), "corpus", "serve", "--dir", str(root), "--port", "0",
                                "--token-file", str(root / "token")], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("cce corpus serve: serving http://127.0.0.1:"), line + process.stderr.read()
        port = int(line.split("http://127.0.0.1:", 1)[1].split("/", 1)[0])
        yield port, root
    finally:
        process.terminate()
        process.wait(timeout=10)


def exchange(port: int, raw: bytes, timeout: float = 10.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(raw)
        chunks = []
        while data := conn.recv(65536):
            chunks.append(data)
    return b"".join(chunks)


def http_get(port: int, target: str, token: str | None = TOKEN) -> tuple[int, dict[str, str], str]:
    auth = f"Authorization: Bearer {token}\r\n" if token is not None else ""
    raw = exchange(port, f"GET {target} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n".encode())
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in lines[1:])}
    return int(lines[0].split()[1]), headers, body.decode("utf-8")


def test_live_authenticated_docs_and_401_without_the_token(served: tuple[int, Path]) -> None:
    port, _root = served
    status, headers, body = http_get(port, "/docs?service=checkout")
    assert status == 200 and headers["content-type"] == "application/json"
    docs = json.loads(body)["docs"]
    assert docs and docs[0]["title"] == "Checkout service runbook" and docs[0]["id"]
    assert int(headers["content-length"]) == len(body.encode("utf-8"))
    for token in (None, "not-the-token", ""):
        status, headers, body = http_get(port, "/docs?service=checkout", token)
        assert (status, body, headers.get("www-authenticate")) == (401, '{"error":"unauthorized"}', "Bearer")


def test_live_hostile_and_huge_queries_answer_without_injecting_headers(served: tuple[int, Path]) -> None:
    port, _root = served
    raw = exchange(port, (f"GET /docs?service=checkout&q=a%0d%0aX-Injected:+evil HTTP/1.1\r\n"
                          f"Authorization: Bearer {TOKEN}\r\n\r\n").encode())
    head = raw.split(b"\r\n\r\n", 1)[0].lower()
    assert raw.startswith(b"HTTP/1.1 200 OK\r\n") and b"x-injected" not in head
    for q in ("%24%28rm+-rf+%2F%29", "%00%00%00", "z" * 6_000):
        status, _headers, body = http_get(port, f"/docs?service=checkout&q={q}")
        assert status == 200 and isinstance(json.loads(body)["docs"], list)
    status, _headers, body = http_get(port, "/docs?service=" + "checkout+" * 700)  # a 6 KB service
    assert status == 200 and json.loads(body)["docs"]


def test_live_an_oversized_request_head_is_refused_and_the_server_goes_on(served: tuple[int, Path]) -> None:
    port, _root = served
    status, _headers, body = http_get(port, "/docs?service=checkout&q=" + "z" * MAX_HEAD_BYTES)
    assert (status, body) == (431, '{"error":"request head too large"}')
    padding = "".join(f"X-Pad-{i}: {'y' * 100}\r\n" for i in range(100))
    raw = exchange(port, f"GET /docs?service=checkout HTTP/1.1\r\n{padding}\r\n".encode())
    assert raw.startswith(b"HTTP/1.1 431 ")
    assert http_get(port, "/docs?service=checkout")[0] == 200


def test_live_an_idle_client_does_not_hold_up_the_next(served: tuple[int, Path]) -> None:
    port, _root = served
    with socket.create_connection(("127.0.0.1", port)) as idle:
        idle.sendall(b"GET /docs?service=checkout HTTP/1.1\r\n")  # and never finishes its head
        started = time.monotonic()
        assert http_get(port, "/docs?service=checkout")[0] == 200
        assert time.monotonic() - started < 4.0  # answered while the idle one still waits (its deadline is 5 s)
        idle.settimeout(15)
        assert idle.recv(100) == b""  # the server closes it once its deadline passes


def test_the_default_port_is_the_references() -> None:
    assert DEFAULT_PORT == 8799


def test_serve_refuses_to_start_without_a_token(tmp_path: Path) -> None:
    env = {TOKEN_ENV: ""}
    done = run_cce("corpus", "serve", "--dir", tmp_path, "--port", "0", env=env, timeout=30)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: cce corpus serve requires a bearer token") and done.stderr.count("\n") == 1


def test_serve_refuses_a_non_loopback_host(tmp_path: Path) -> None:
    done = run_cce("corpus", "serve", "--dir", tmp_path, "--port", "0", "--host", "0.0.0.0", env={TOKEN_ENV: "t"},
                   timeout=30)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("error: cce corpus serve listens on the loopback interface only: --host 0.0.0.0 is not a "
                           "loopback address (use 127.0.0.1 or ::1)\n")


def test_serve_fails_on_a_broken_store_instead_of_serving_nothing(tmp_path: Path) -> None:
    (tmp_path / ".cce" / "knowledge").mkdir(parents=True)
    (tmp_path / ".cce" / "knowledge" / "current").write_text("deadbeefdeadbeef\n", encoding="utf-8")
    done = run_cce("corpus", "serve", "--dir", tmp_path, "--port", "0", env={TOKEN_ENV: "t"}, timeout=30)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: the knowledge store is corrupt") and done.stderr.count("\n") == 1


def test_ctrl_c_stops_the_server(tmp_path: Path) -> None:
    import signal

    env = {**{k: v for k, v in os.environ.items() if k != "CCE_DEBUG"}, TOKEN_ENV: TOKEN}
    process = subprocess.Popen([cce_executable(), "corpus", "serve", "--dir", str(tmp_path), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("cce corpus serve: serving http://127.0.0.1:")
        assert process.stdout.readline().startswith("knowledge store : ")
        assert process.stdout.readline() == "press Ctrl-C to stop.\n"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert (process.returncode, err, out) == (0, "", "\ncce corpus serve: stopped.\n")
