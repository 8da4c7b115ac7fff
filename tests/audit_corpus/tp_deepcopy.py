"""Deep copies: copy.deepcopy by any name, pydantic's model_copy(deep=True); a shallow
model_copy is low."""
import copy
from copy import deepcopy as clone


async def snapshot(state, model):
    a = copy.deepcopy(state)  # expect: high copy.deepcopy
    b = clone(state)  # expect: high copy.deepcopy
    c = model.model_copy(deep=True)  # expect: high .model_copy
    d = model.model_copy(update={"step": 1})  # expect: low .model_copy
    return a, b, c, d
