"""privrepro.models."""
