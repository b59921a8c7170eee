"""Stores in this machine's files: a folder, a zip archive, an LMDB environment."""
