"""Which traces a push writes to, without a server: only those pulled from that server; a
sample's trace imported from a file (or pulled from another server) is counted and named, never
sent. The server records what it is sent (the real servers: tests/test_connectors_*.py)."""

from __future__ import annotations

import json

from annotate.connectors.push import plan_push, push
from annotate.store import open_store
from tests.test_connectors_pull import GOOD, RecordedServer


class RecordingServer(RecordedServer):
    def __init__(self, source: str = RecordedServer.source) -> None:
        super().__init__()
        self.source = source
        self.sent: list = []
        self.cards: list = []

    def send(self, feedback, remote_id):
        self.sent.append(feedback)
        return None

    def set_card(self, name, text):
        self.cards.append((name, text))


def labelled(cli, db, tmp_path) -> RecordingServer:
    """GOOD pulled from the server, one trace from a file; both sampled, split and labelled."""
    server = RecordingServer()
    store = open_store(db)
    from annotate.connectors.pull import pull

    pull(store, server)
    store.close()
    row = {"trace_id": "from-a-file", "model": "claude-haiku-4-5", "request": "How long?",
           "context": ["Refunds take 5 business days."], "response": "Within 5 business days."}  # fmt: skip
    (tmp_path / "file.jsonl").write_text(json.dumps(row) + "\n")
    assert cli("import", str(tmp_path / "file.jsonl"), db=db).code == 0
    assert cli("sample", "--name", "s", "--n", "2", "--by", "model", "--seed", "1", db=db).code == 0
    assert cli("claims", "--sample", "s", "--extractor", "sentences", db=db).code == 0
    store = open_store(db)
    claims = store.fetchall("SELECT trace_id, claim_index FROM claims ORDER BY ALL")
    store.close()
    labels = [
        {"trace_id": t, "claim": i, "reviewer": "rita", "label": "supported"} for t, i in claims
    ]
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))
    assert cli("import-labels", str(tmp_path / "labels.jsonl"), db=db).code == 0
    return server


def test_only_traces_from_that_server_are_written_the_others_named(cli, db_path, tmp_path):
    server = labelled(cli, db_path, tmp_path)
    store = open_store(db_path)
    try:
        plan = plan_push(store, server, "s")
        assert plan.elsewhere == ["from-a-file"] and server.sent == []  # a preview sends nothing
        done = push(store, server, "s")
        assert [(f.trace_id, f.tool_id, f.name, f.kind) for f in server.sent] == [
            (GOOD, GOOD, "annotate.gold", "HUMAN")
        ]
        assert done.as_json()["not_from_this_server_first"] == ["from-a-file"]
        other = RecordingServer("phoenix http://elsewhere project p")
        assert plan_push(store, other, "s").elsewhere == sorted([GOOD, "from-a-file"])
        server.sent.clear()
        assert push(store, server, "s").to_send == [] and server.sent == []  # nothing changed
    finally:
        store.close()
