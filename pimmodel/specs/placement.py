"""NUMA placement of a transfer's host buffers as named settings of a spec's ``[platform]`` terms
(``remote_buffer_share``, ``buffers_on_one_node``; priced by ``primitives.placement_factor``), so one spec expresses
a baseline and a changed placement (``pimmodel transfer --placement``, ``pimmodel predict --placement``).

The UPMEM SDK runs its copy threads on the rank's NUMA node (pim-opt-server.md section 3.2), so what a placement
decides is where the host buffers sit relative to the ranks:

- ``local``: every buffer on its rank's socket (NUMA-aware allocation; the pricing from before placement);
- ``remote``: every buffer on the other socket (the worst case UPMEM Unleashed's up-to-2.9x gain bounds);
- ``interleaved``: pages spread over all nodes (``numactl --interleave=all``, as upmem-sdk-light's runs):
  a share ``1 - 1/sockets`` of the bytes remote;
- ``one-node``: every buffer on the first socket (first touch by one unpinned thread with Linux's default policy,
  or ``numactl --membind``): the ranks beyond ``ranks_per_socket`` remote. With 20 ranks per socket the study's
  2,048 DPUs (32 ranks) have 12 of 32 ranks remote.
"""

from __future__ import annotations

from ..errors import SpecError, check_known
from .hardware import HardwareSpec

PLACEMENTS = ("local", "remote", "interleaved", "one-node")


def with_placement(hw: HardwareSpec, placement: str) -> HardwareSpec:
    """``hw`` with its host buffers placed as ``placement`` (``PLACEMENTS``); an unknown name, or a spec without
    the placement terms (another architecture family), is one line."""
    if not isinstance(hw, HardwareSpec):
        raise SpecError(f"--placement places the host buffers of UPMEM-like host transfers; {hw.name} has no "
                        "[platform] placement terms: drop it")
    check_known("placement", placement, PLACEMENTS)
    share = {"local": 0.0, "remote": 1.0, "interleaved": 1 - 1 / hw.host_sockets, "one-node": 0.0}[placement]
    source = f"--placement {placement}"
    sources = {**hw.sources, "remote_buffer_share": source, "buffers_on_one_node": source}
    return hw.replace(remote_buffer_share=share, buffers_on_one_node=int(placement == "one-node"), sources=sources)


def placement_of(hw: HardwareSpec) -> str:
    """The name of ``hw``'s placement, or ``share <x> remote`` for a share no name gives."""
    if hw.buffers_on_one_node:
        return "one-node"
    for name in ("local", "remote", "interleaved"):
        if with_placement(hw, name).remote_buffer_share == hw.remote_buffer_share:
            return name
    return f"share {hw.remote_buffer_share:g} remote"
