"""``pim-opt-server`` is upmem-2556 with the study's plausible host-buffer placement and nothing else, so every
number it changes is the placement's (issue 27, item 5)."""

from __future__ import annotations

import dataclasses

from pimmodel.specs import load_hardware
from pimmodel.specs.placement import with_placement

PLACEMENT = {"buffers_on_one_node", "ranks_per_socket", "remote_transfer_factor"}


def test_it_is_upmem_2556_but_for_the_placement() -> None:
    server, base = load_hardware("pim-opt-server"), load_hardware("upmem-2556")
    differ = {f.name for f in dataclasses.fields(server)
              if f.name not in ("name", "description", "sources") and getattr(server, f.name) != getattr(base, f.name)}
    assert differ == {"buffers_on_one_node"}, differ
    assert server.buffers_on_one_node == 1 and server.remote_buffer_share == 0.0
    assert all(server.sources[k] for k in PLACEMENT)


def test_it_prices_as_predict_with_placement_one_node() -> None:
    server, base = load_hardware("pim-opt-server"), load_hardware("upmem-2556")
    placed = with_placement(base, "one-node")
    assert server.numeric() == placed.numeric()
