"""Users: the claim every write path takes (and erasure holds alone), and the vocabulary a user taught, exported."""
