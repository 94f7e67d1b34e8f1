"""Fetches positioned inside a record batch: what the leader answered to each."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BatchSpan:
    base_offset: int
    last_offset: int


@dataclass(frozen=True)
class MidBatchFetch:
    """One Fetch whose FetchOffset is inside a batch (not its base): the batches of the answer."""

    version: int
    offset: int
    error_code: int
    high_watermark: int
    answered: tuple[BatchSpan, ...]  # whole batches of the answer, in order


@dataclass(frozen=True)
class MidBatchFetches:
    topic: str
    log: tuple[BatchSpan, ...]  # the partition's batches, read from their bases
    fetches: tuple[MidBatchFetch, ...]
