"""The run pipeline, one for every run and every executor: select -> check reuse -> plan units ->
execute -> persist -> finalize, driven by one function, :func:`framebench.pipeline.driver.drive`.

A front end (the text run ``framebench.pipeline.text``, the symbolic simulator, the Habitat
simulator) selects its work and names its result keys; the driver serves what the run's result
store already holds and the front end plans the rest as units. The executor
(``framebench.executors``: local or Ray) runs them and yields result chunks as they finish; the
driver stores every chunk the moment it arrives (and writes its side files), so a killed worker
loses only what it had not returned and a killed driver resumes from its own store. The run folder
is written once, at the end, on the driver.
"""

from framebench.executors.base import Chunk, Executor, Unit, WorkerMeta
from framebench.pipeline.driver import (
           Execution,
           Finished,
           FrontEnd,
           Rows,
           Selected,
           UnitPlan,
           drive,
           persist,
           write_side_file,
)

__all__ = ["Chunk", "Execution", "Executor", "Finished", "FrontEnd", "Rows", "Selected", "Unit", "UnitPlan", "WorkerMeta",
           "drive", "persist", "write_side_file"]
