"""The addresses of a target that names every broker once, when it starts (kfake, librdkafka's mock
cluster): a mixin ahead of `Cluster` in the bases, so both answer the address questions one way."""

from __future__ import annotations


class FixedAddresses:
    """`bootstrap_servers`, `broker_ids` and `broker_address` from `_addrs`, which the cluster fills
    when its process reports its listeners: every broker ever started, stopped ones too."""

    _addrs: dict[int, tuple[str, int]]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{h}:{p}" for h, p in self._addrs.values())

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self._addrs)

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        return self._addrs[broker_id]
