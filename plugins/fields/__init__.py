"""First-party metadata-field plugins: top-level document fields zarrkit understands."""
