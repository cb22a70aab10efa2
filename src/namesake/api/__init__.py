"""HTTP API (FastAPI): thin routes over the service functions."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.api.app import create_app

__all__ = [
    "create_app",
]
__getattr__ = lazy_names(__name__, __file__)
