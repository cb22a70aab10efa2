"""The composition root: `build_services` wires the runtime into services once; warm-up, metrics and the scheduler."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.app.address import announce, announced_url, withdraw
    from namesake.app.idle import IdleGiveBack
    from namesake.app.metrics import Metrics
    from namesake.app.scheduler import start_scheduler
    from namesake.app.services import Services, build_services
    from namesake.app.warmup import warm_up

__all__ = [
    "IdleGiveBack",
    "Metrics",
    "Services",
    "announce",
    "announced_url",
    "build_services",
    "start_scheduler",
    "warm_up",
    "withdraw",
]
__getattr__ = lazy_names(__name__, __file__)
