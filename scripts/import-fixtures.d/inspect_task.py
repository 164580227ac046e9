"""The fixture items as an inspect_ai task: the question as input, the answer as target, the
options as choices, the category as metadata; scored by inspect's own `includes()`."""
import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


def samples():
    for line in (Path(__file__).parent / "items.jsonl").read_text().splitlines():
        row = json.loads(line)
        yield Sample(
            id=row["id"],
            input=row["question"],
            target=row["answer"],
            choices=row.get("choices"),
            metadata={"category": row["category"]},
        )


@task
def prism_fixture():
    return Task(dataset=list(samples()), solver=generate(), scorer=includes())
