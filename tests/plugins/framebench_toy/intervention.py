"""``M7``: an OMIT intervention that asks the model to picture who is affected before answering."""

from framebench.text_eval.omit.conditions import Condition

M7 = Condition(name="M7", max_new_tokens=8, final_answer_line=False,
               instruction="Picture the person most affected by your answer. "
                           "Answer with exactly one word: Yes or No.",
               summary="perspective-taking before a short answer")
