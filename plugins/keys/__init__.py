"""First-party zarrkit plugins; each is reached only through its entry point."""
