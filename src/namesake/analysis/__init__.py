"""The analysis service: transcripts read from files or requests, fed to the pure stages (in-process or in the
worker pool), and their suggestions saved."""
