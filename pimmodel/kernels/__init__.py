"""UPMEM kernels as data: a general vocabulary (``vocabulary``), its pricing on a hardware spec
(``pricing``), the PIM-Opt study's training kernels (``study``) and the PrIM benchmark kernels (``prim``)."""
