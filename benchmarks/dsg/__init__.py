"""DSG: question graphs as dependency programs, replayed VQA answers, human correlation."""

from groundeval.benchmarks.dsg._correlate import correlate, dsg_items, grade_dsg
from groundeval.benchmarks.dsg._data import (
    Dependencies,
    DSGDataError,
    DSGGraph,
    graph_program,
    image_id,
    load_dsg_programs,
    read_answers,
    read_graphs,
    read_likert,
)
from groundeval.benchmarks.dsg._replay import RecordedAnswersJudge

__all__ = [
    "DSGDataError",
    "DSGGraph",
    "Dependencies",
    "RecordedAnswersJudge",
    "correlate",
    "dsg_items",
    "grade_dsg",
    "graph_program",
    "image_id",
    "load_dsg_programs",
    "read_answers",
    "read_graphs",
    "read_likert",
]
