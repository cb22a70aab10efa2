"""namesake: keeps ASR transcripts true to the names people use, and remembers corrections."""

__version__ = "0.1.0"
