"""Rendering: plain records in, rich tables / JSON / matplotlib plots out. No computation here."""
