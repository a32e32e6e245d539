"""Parsers: text in, data out. They run nothing and never raise on unexpected text."""
