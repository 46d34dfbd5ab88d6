"""privrepro.audit."""
