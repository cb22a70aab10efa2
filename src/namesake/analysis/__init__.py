"""The analysis service: transcripts read from files or requests, fed to the pure stages (in-process or in the
worker pool), and their suggestions saved."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.analysis.early import start_early
    from namesake.analysis.engines import Engine, fixes_of, write_back
    from namesake.analysis.files import InputLine, as_namesake, field_of, parse_transcript, read_batch
    from namesake.analysis.inputs import CheckedTranscript, TranscriptIn, find_unwritable
    from namesake.analysis.pool import StagePool
    from namesake.analysis.ports import AnalysisStores, StoredInputs
    from namesake.analysis.service import AnalysisFailure, AnalysisResult, AnalysisService
    from namesake.analysis.stage_process import StageProcess
    from namesake.analysis.stores import SqlAnalysisStores

__all__ = [
    "AnalysisFailure",
    "AnalysisResult",
    "AnalysisService",
    "AnalysisStores",
    "CheckedTranscript",
    "Engine",
    "InputLine",
    "SqlAnalysisStores",
    "StagePool",
    "StageProcess",
    "StoredInputs",
    "TranscriptIn",
    "as_namesake",
    "field_of",
    "find_unwritable",
    "fixes_of",
    "parse_transcript",
    "read_batch",
    "start_early",
    "write_back",
]
__getattr__ = lazy_names(__name__, __file__)
