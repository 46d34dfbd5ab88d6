"""privrepro.pac."""
