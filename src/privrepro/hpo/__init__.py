"""privrepro.hpo."""
