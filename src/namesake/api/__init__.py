"""HTTP API (FastAPI): thin routes over the service functions."""
