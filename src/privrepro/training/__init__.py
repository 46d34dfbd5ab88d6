"""privrepro.training."""
