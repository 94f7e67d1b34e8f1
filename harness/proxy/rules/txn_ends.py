"""How a transaction ends (KIP-98 EndTxn): the outcome the coordinator reaches, and how it says so."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.protocol.errors import UNKNOWN_SERVER_ERROR
from harness.protocol.spec import ApiSpec
from harness.proxy.rules.base import Rule

END_TXN = 26


@dataclass(eq=False)
class UnconfirmedEndTxnCommit(Rule):
    """The first EndTxn commit of each transactional id is aborted and answered UNKNOWN_SERVER_ERROR:
    a coordinator that fails a commit it was asked for and says nothing of the outcome. Redpanda
    answered EndTxn so in some versions (franz-go v1.21.4 CHANGELOG: "GroupTransactSession.End no
    longer reports a successful commit when the broker answers EndTxn with UNKNOWN_SERVER_ERROR (seen
    from Redpanda in some older versions)"; twmb/franz-go 42b3d833: "the broker's
    UNKNOWN_SERVER_ERROR left the commit unconfirmed and the transaction may have aborted").

    The broker is asked to abort (Committed false), the worst outcome the answer allows, and its
    answer's error, NONE, becomes UNKNOWN_SERVER_ERROR (the rest of the answer as it gave it). A
    client that takes the answer for a commit moves its consumed offsets past records whose output
    was rolled back. Where the broker refused the abort, its own answer stands and the id's next
    commit is turned again; after one turned commit the id's commits reach the broker as sent."""

    needs_request: bool = field(default=True, init=False, repr=False)
    _turned: set[str] = field(default_factory=set, init=False, repr=False)  # awaiting the broker's answer
    _done: set[str] = field(default_factory=set, init=False, repr=False)

    def acts_on_request(self, api_key: int, version: int) -> bool:
        return api_key == END_TXN

    def edit_request(self, api: ApiSpec, version: int, body: dict[str, Any]) -> bool:
        tid = body.get("TransactionalId")
        with self._lock:
            if not body.get("Committed") or tid in self._done or tid in self._turned:
                return False
            self._turned.add(tid)
        body["Committed"] = False
        return True

    def acts_on_response(self, api_key: int, version: int) -> bool:
        return api_key == END_TXN

    def edit_answer(self, api: ApiSpec, version: int, request: dict[str, Any] | None, body: dict[str, Any]) -> bool:
        # `request` is what the client sent: a commit, where this rule sent the broker an abort.
        tid = (request or {}).get("TransactionalId")
        with self._lock:
            if not (request or {}).get("Committed") or tid not in self._turned:
                return False
            self._turned.discard(tid)
            if body.get("ErrorCode"):
                return False  # the broker refused the abort: its answer stands, the next commit is turned
            self._done.add(tid)
        body["ErrorCode"] = UNKNOWN_SERVER_ERROR
        return self.take()

    def describe(self) -> str:
        return (f"UnconfirmedEndTxnCommit(the first EndTxn commit of each transactional id aborted and answered "
                f"UNKNOWN_SERVER_ERROR, {self.fired} answered)")
