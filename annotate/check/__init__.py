"""check: the runtime grounding check that carries a calibrated rubric into production. A
production app loads the rubric export once and checks each answer against its context
(`GroundingCheck.from_export(path).check(response, context)`); `annotate check` does the same
for JSON Lines.

Needs no store, no Streamlit, no app: may import rubrics' light modules (spec, prompt,
rubric_file, baseline), claims.sentences, llm, stats and errors; never annotate.store.
"""

from annotate.check.grounding import GroundingCheck
from annotate.check.material import CheckInputError
from annotate.check.result import UNKNOWN, CheckResult

__all__ = ["UNKNOWN", "CheckInputError", "CheckResult", "GroundingCheck"]
