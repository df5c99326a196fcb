"""Readers that turn a file into its structure (title, sections by heading path, blocks of
prose, lists, code and tables, PDF pages), and the cutting of that structure into passages.

Each format is one module exposing `SUFFIXES` and `read(path) -> Structure`; `registry.py`
maps suffixes to modules, so a new format is one more module and one line there.
"""
