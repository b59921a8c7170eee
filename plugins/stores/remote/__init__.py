"""Stores over a network: HTTP, fsspec filesystems and obstore object stores, and the routing of cloud URLs between them."""
